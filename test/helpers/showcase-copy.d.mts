// The types of showcase-copy.mjs.
/** Copies the showcase (less `.aqven`) into `dir`, its simulator at zero latency unless `latency: 'showcase'`; answers `dir`. */
export function copyShowcaseTo(dir: string, o?: { latency?: 'zero' | 'showcase' }): string;
