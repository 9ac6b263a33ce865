import { patternKinds } from '#protocol/privacy';
import type { AuditDetail } from '../audit/audit-trail.js';
import { fromJsonColumn } from '../shared/json-column.js';
import { effectiveRuntimeConfig } from './deployment.schemas.js';

/**
 * What a change of runtime_config does to what is kept (README, Privacy: what is kept), from then
 * on: the audit log records it apart; undefined when it keeps what it kept.
 */
export function privacyChange(before: string | null, after: string | null): AuditDetail | undefined {
  const keeping = (text: string | null) => {
    const privacy = effectiveRuntimeConfig.safeParse(fromJsonColumn(text)).data?.privacy;
    return { keep: privacy?.keep ?? 'everything', redact: (privacy?.redact ?? patternKinds).join(',') };
  };
  const [from, to] = [keeping(before), keeping(after)];
  if (from.keep === to.keep && (to.keep !== 'redacted' || from.redact === to.redact)) return undefined;
  return { keep_before: from.keep, keep_after: to.keep, redact: to.keep === 'redacted' ? to.redact : null };
}
