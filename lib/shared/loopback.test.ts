import { describe, expect, it } from 'vitest';
import { isLoopback } from './loopback';

describe('isLoopback', () => {
  it.each(['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1'])('%s is this machine', (h) => {
    expect(isLoopback(h)).toBe(true);
  });
  it.each(['0.0.0.0', '::', '10.0.0.7', '128.0.0.1', '127.0.0.256', 'localhost.evil.com', '127.0.0.1.nip.io', '::ffff:10.0.0.1', ''])('%s is not', (h) => {
    expect(isLoopback(h)).toBe(false);
  });
});
