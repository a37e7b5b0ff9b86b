// `aqven serve` itself (DESIGN: CLI; The dashboard), on the build the other specs use: the real bin
// started on a port of its own and a showcase copy of its own, its log lines, the request checks
// under it, a run told to its log, and SIGTERM stopping it (143). Its refusals before listening are
// tested without a build (test/cli/serve-command.test.ts). No browser: plain HTTP.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { rawRequest } from '../test/helpers/raw-request';
import { copyShowcaseTo } from '../test/helpers/showcase-copy.mjs';

test('aqven serve serves the built dashboard on loopback, answers its routes and the request checks, logs a run; SIGTERM stops it (143)', async () => {
  const dir = copyShowcaseTo(mkdtempSync(join(tmpdir(), 'aqven-serve-')));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['AQVEN_DATABASE_URL', 'AQVEN_PUBLIC_URL', 'PORT', 'AQVEN_SIMULATE', 'AQVEN_PROJECT']) delete env[k];
  const child = spawn(process.execPath, ['bin/aqven.mjs', 'serve', '--port', '0', '--simulate', '--project', dir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // its log lines, each complete line of stdout one JSON object — Next.js's own words too
  const logs = () =>
    out
      .slice(0, out.lastIndexOf('\n') + 1)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown> & { msg: string });
  const until = async (what: string, found: () => unknown) => {
    await expect.poll(() => Boolean(found()) || child.exitCode !== null, { message: what, timeout: 60_000 }).toBe(true);
    expect(found(), `${what}:\n${out}\n${err}`).toBeTruthy();
  };
  try {
    // the URL line comes once it listens: the same words in either log format
    const urlLine = () => logs().find((l) => l.msg.startsWith('AQVEN dashboard: '));
    await until('the URL line', urlLine);
    expect(urlLine()!.msg).toMatch(/^AQVEN dashboard: http:\/\/127\.0\.0\.1:\d+\/runs {2}\(project .*, simulated providers\)$/);
    expect(urlLine()!.msg).toContain(`(project ${dir}, `);
    expect(urlLine()).toMatchObject({ level: 'info', name: 'aqven serve', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/runs$/), project: dir, simulated: true });
    const port = Number(/:(\d+)\/runs/.exec(urlLine()!.msg)![1]);

    const runs = await rawRequest(port, '/api/runs');
    expect(runs.status).toBe(200);
    expect(JSON.parse(runs.body)).toMatchObject({ items: [], nextCursor: null });
    expect(runs.headers['x-frame-options']).toBe('DENY');
    const page = await rawRequest(port, '/runs');
    expect(page.status).toBe(200);
    expect(page.body).toContain('sim-badge');
    // the proxy runs under this server too: a foreign Host is refused, and the log says so
    expect((await rawRequest(port, '/runs', { headers: { host: 'rebind.example' } })).status).toBe(421);
    await until('the refusal line', () => logs().find((l) => l.status === 421));
    expect(logs().find((l) => l.status === 421)).toMatchObject({ level: 'warn', method: 'GET', path: '/runs', msg: 'GET /runs refused: 421' });

    // a run started through the API — Next.js's own copy of the run code — is told to this process's log
    const started = await rawRequest(port, '/api/runs', {
      method: 'POST',
      body: { flow: 'triage', input: { ticket: 'My invoice is wrong' } },
      headers: { origin: `http://127.0.0.1:${port}`, prefer: 'wait=20' },
    });
    expect(started.status, started.body).toBeLessThan(300);
    const { id } = JSON.parse(started.body) as { id: string };
    await until('the run end line', () => logs().find((l) => l.runId === id && typeof l.status === 'string'));
    const run = logs().filter((l) => l.runId === id);
    expect(run[0]).toMatchObject({ msg: `run ${id} triage started`, traceId: null, name: 'aqven serve' });
    expect(run.at(-1)!.msg).toMatch(new RegExp(`^run ${id} triage (succeeded|failed)\\b`));

    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(logs().at(-1)).toMatchObject({ level: 'info', signal: 'SIGTERM', msg: 'SIGTERM: the dashboard stops' });
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
