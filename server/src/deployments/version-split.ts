import { createHash } from 'node:crypto';
import type { VersionShare } from './deployment-context.js';

/**
 * The version a visitor's new conversation gets when a deployment splits them between versions
 * (README, Tests and analysis): by weight, and the same for the same visitor every time (a hash of
 * the deployment and the token's subject), so a visitor keeps theirs across conversations.
 */
export function versionFor(shares: readonly VersionShare[], deploymentId: string, sub: string): number | undefined {
  const total = shares.reduce((sum, s) => sum + s.weight, 0);
  if (!total) return undefined;
  const point = createHash('sha256').update(`${deploymentId}\n${sub}`).digest().readUInt32BE(0) % total;
  let passed = 0;
  for (const share of shares) {
    passed += share.weight;
    if (point < passed) return share.version;
  }
  return undefined;
}
