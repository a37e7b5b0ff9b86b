// Which project a command works on (DESIGN: "CLI"): --project, then $AQVEN_PROJECT, then ./showcase.
import { resolve } from 'node:path';

export function resolveProjectDir(opt?: string, env: Record<string, string | undefined> = process.env, cwd: string = process.cwd()): string {
  return resolve(cwd, opt || env.AQVEN_PROJECT || 'showcase');
}
