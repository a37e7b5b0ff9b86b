// A copy of the showcase project without its run history, for a test's world (showcase.ts), each
// browser test's dashboard (e2e/serve.mjs) and the served-dashboard spec (e2e/serve.spec.ts). Plain
// JavaScript, so the e2e server's launcher can import it without a TypeScript loader.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The showcase's simulated latency (aqven.yaml), played by every session started with --simulate / AQVEN_SIMULATE=1. */
const SHOWCASE_LATENCY = 'latency: { first_token_ms: 150, tokens_per_s: 120 }';

/**
 * Copies `showcase/` (of the working directory) into `dir`, less its `.aqven` folder. Its simulator
 * answers at once (zero latency), chaos and everything else as in the showcase, unless `latency` is
 * 'showcase': a test about time asks for that or scripts its own latency.
 */
export function copyShowcaseTo(dir, { latency = 'zero' } = {}) {
  cpSync(join(process.cwd(), 'showcase'), dir, { recursive: true, filter: (src) => !src.includes('.aqven') });
  if (latency !== 'showcase') {
    const file = join(dir, 'aqven.yaml');
    const text = readFileSync(file, 'utf8');
    if (!text.includes(SHOWCASE_LATENCY)) throw new Error(`showcase/aqven.yaml no longer says "${SHOWCASE_LATENCY}": update test/helpers/showcase-copy.mjs`);
    writeFileSync(file, text.replace(SHOWCASE_LATENCY, 'latency: { first_token_ms: 0, tokens_per_s: 0 }'));
  }
  return dir;
}
