import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return 'accepted';
};

describe('configuration read at start', () => {
  it('trusts X-Forwarded-For from loopback by default and from the TRUSTED_PROXIES given, refusing what is not an address', () => {
    expect(loadConfig({}).trustProxy).toMatchObject({ hops: 0 });
    expect(
      loadConfig({ TRUST_PROXY: '1' }).trustProxy.proxies.map(([range, bits]) => `${range.toString()}/${bits}`),
    ).toEqual(['127.0.0.0/8', '::1/128']);
    expect(loadConfig({ TRUST_PROXY: '2', TRUSTED_PROXIES: '10.0.0.0/8,192.0.2.7' }).trustProxy.proxies).toHaveLength(
      2,
    );
    expect(refusal({ TRUST_PROXY: '1', TRUSTED_PROXIES: 'balancer.internal' })).toContain(
      'TRUSTED_PROXIES: "balancer.internal" is not an IP address or CIDR range',
    );
  });
});
