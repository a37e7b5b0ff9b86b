/** The hash of the sources `next build` reads, or null when git cannot list them. */
export function sourceHash(root: string): string | null;
/** True when `.next` is the build serve.mjs made from sources hashing to `hash`. */
export function isBuiltFrom(root: string, hash: string | null): boolean;
/** Stamps the build just made with the hash of the sources it was started from. */
export function stampBuild(root: string, hash: string | null): void;
