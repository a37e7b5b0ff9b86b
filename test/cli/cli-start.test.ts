// How the `aqven` command starts (DESIGN: CLI): the compiled CLI in the bin's own process, from any
// folder, rebuilt when a source is newer than the build.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isCliStale } from '../../scripts/cli-stale.mjs';
import { copyShowcase } from '../helpers/showcase';
import { aqven, BIN, ensureCliBuilt, ROOT } from './aqven-process';

beforeAll(ensureCliBuilt, 120_000);

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Pids of the live processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        // field 4 of /proc/PID/stat is the parent pid; the command name (field 2) may hold spaces
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('aqven start-up', () => {
  it('--version and -V print the version of package.json', () => {
    for (const flag of ['--version', '-V']) {
      const res = aqven([flag]);
      expect(res.code).toBe(0);
      expect(res.out).toBe(`${VERSION}\n`);
    }
  });

  it('works from any folder: check, run, show and init with the working directory elsewhere', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'aqven-cwd-'));
    const dir = copyShowcase();
    expect(aqven(['check', '--project', dir], {}, { cwd }).code).toBe(0);
    // the run database is migrated from drizzle/ next to the package, not the working directory
    const run = aqven(['run', 'triage', '--simulate', '--json', '--project', dir, '--input', '{"ticket":"I was charged twice"}'], {}, { cwd });
    expect([0, 1], run.err).toContain(run.code);
    const record = JSON.parse(run.out) as { id: string };
    expect(JSON.parse(aqven(['show', record.id, '--json', '--project', dir], {}, { cwd }).out)).toEqual(record);
    // templates/ too is found next to the package
    const init = aqven(['init', 'fresh'], {}, { cwd });
    expect(init.code).toBe(0);
    expect(aqven(['check', '--project', 'fresh'], {}, { cwd }).code).toBe(0);
    // and $AQVEN_PROJECT relative to the working directory
    expect(aqven(['check'], { AQVEN_PROJECT: 'fresh' }, { cwd }).out).toMatch(/^✓ fresh: /m);
  }, 60_000); // six real processes: 20 s ran out on a busy machine

  it('SIGTERM to the bin process while `aqven sim` runs ends it and frees the port: no child process is left', async () => {
    const child = spawn(process.execPath, [BIN, 'sim', '--port', '0'], { cwd: tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', (code) => reject(new Error(`aqven sim exited ${code} before listening: ${out}`)));
    });
    expect(await refused(port)).toBe(false);
    // the simulator runs in the bin's own process, not in a child it would orphan
    if (process.platform === 'linux') expect(childrenOf(child.pid!)).toEqual([]);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null }); // its own handler closed the server
    expect(await refused(port)).toBe(true);
  });
});

describe('isCliStale', () => {
  function fakeBuild(builtAt: number, inputs: string[]) {
    const root = mkdtempSync(join(tmpdir(), 'aqven-stale-'));
    mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
    mkdirSync(join(root, 'lib'));
    for (const f of inputs) writeFileSync(join(root, f), '');
    writeFileSync(join(root, 'dist', 'cli', 'manifest.json'), JSON.stringify({ builtAt, files: ['aqven.mjs'], inputs }));
    return root;
  }
  const past = (root: string, f: string, ms: number) => utimesSync(join(root, f), new Date(ms), new Date(ms));

  it('is fresh when every input is older than the build, stale when one is newer, gone, or there is no build', () => {
    const builtAt = Date.now() - 60_000;
    const root = fakeBuild(builtAt, ['lib/a.ts', 'lib/b.ts']);
    past(root, 'lib/a.ts', builtAt - 1000);
    past(root, 'lib/b.ts', builtAt - 1000);
    expect(isCliStale(root)).toBe(false);
    past(root, 'lib/b.ts', builtAt + 1000); // edited after the build
    expect(isCliStale(root)).toBe(true);
    const gone = fakeBuild(builtAt, ['lib/a.ts']);
    past(gone, 'lib/a.ts', builtAt - 1000);
    writeFileSync(join(gone, 'dist', 'cli', 'manifest.json'), JSON.stringify({ builtAt, files: [], inputs: ['lib/a.ts', 'lib/deleted.ts'] }));
    expect(isCliStale(gone)).toBe(true);
    expect(isCliStale(mkdtempSync(join(tmpdir(), 'aqven-nobuild-')))).toBe(true);
  });
});
