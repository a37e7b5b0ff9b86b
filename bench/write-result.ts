import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

/** Writes bench/results/NAME.json with the machine it ran on. */
export function writeResult(name: string, result: unknown): void {
  const dir = join(process.cwd(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const meta = { at: new Date().toISOString(), node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model };
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify({ ...meta, result }, null, 2)}\n`);
}
