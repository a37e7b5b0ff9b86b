// AQVEN_PROVIDER_HOSTS (DESIGN: Project files, providers/NAME.yaml): which hosts a provider request may go to.
import { describe, expect, it } from 'vitest';
import { hostAllowed, providerHosts, refusedHost } from './provider-hosts';

const list = (raw: string) => providerHosts({ AQVEN_PROVIDER_HOSTS: raw })!;

describe('providerHosts', () => {
  it('is null (any host) when unset or blank', () => {
    expect(providerHosts({})).toBeNull();
    expect(providerHosts({ AQVEN_PROVIDER_HOSTS: ' ' })).toBeNull();
    expect(providerHosts(Object.create({ AQVEN_PROVIDER_HOSTS: 'inherited.example' }) as Record<string, string>)).toBeNull();
  });

  it('reads comma-separated entries, trimmed and lower case', () => {
    expect(list(' OpenRouter.ai, *.OpenAI.com ,,127.0.0.1').entries).toEqual(['openrouter.ai', '*.openai.com', '127.0.0.1']);
  });
});

describe('hostAllowed', () => {
  const hosts = list('openrouter.ai, *.openai.azure.com, 127.0.0.1, [::1], localhost.');
  it.each(['openrouter.ai', 'OPENROUTER.AI', 'openrouter.ai.', 'res.openai.azure.com', 'a.b.openai.azure.com', '127.0.0.1', '[::1]', '::1', 'localhost'])('allows %s', (host) =>
    expect(hostAllowed(hosts, host)).toBe(true),
  );
  it.each(['evil.example', 'api.openrouter.ai', 'openrouter.ai.evil.example', 'openai.azure.com', 'evilopenai.azure.com', '127.0.0.2', 'localhost.evil'])('refuses %s', (host) =>
    expect(hostAllowed(hosts, host)).toBe(false),
  );
  it('an entry that is no host name matches nothing: a URL, a port, a bare *', () => {
    for (const entry of ['https://openrouter.ai', 'openrouter.ai:443', 'openrouter.ai/api', '*', '*openrouter.ai', 'open*.ai']) {
      expect(hostAllowed(list(entry), 'openrouter.ai'), entry).toBe(false);
    }
  });
});

describe('refusedHost', () => {
  it("names a URL's host when the list refuses it, else null", () => {
    const hosts = list('openrouter.ai');
    expect(refusedHost(hosts, 'https://evil.example/v1/chat/completions?x=1')).toBe('evil.example');
    expect(refusedHost(hosts, 'https://user:pw@evil.example:8443/v1')).toBe('evil.example');
    expect(refusedHost(hosts, 'https://openrouter.ai/api/v1/chat/completions')).toBeNull();
    expect(refusedHost(null, 'https://evil.example/')).toBeNull();
  });
});
