// What tests use of scripts/build-cli.mjs.
/** Bundles lib/client into dist/client/aqven-client.mjs, the file `aqven/client` names. */
export function buildClient(o?: { logLevel?: string }): Promise<void>;
