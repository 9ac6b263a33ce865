/**
 * What one deployment's widget met on one UTC day (README, Knowing how it goes): sessions opened
 * from an origin (`seen`), or an upgrade or hello refused (`refused`, by reason and its origin or
 * cause), counted and last seen.
 */
export interface DeploymentDiagnosticTable {
  deployment_id: string;
  day: string;
  kind: 'seen' | 'refused';
  /** For `refused`: origin_not_allowed, deployment_inactive or token_invalid; empty for `seen`. */
  reason: string;
  /** The origin (`seen`, origin_not_allowed) or the token's cause (token_invalid); empty when none. */
  detail: string;
  count: number;
  last_at: string;
}

export const refusalReasons = ['origin_not_allowed', 'deployment_inactive', 'token_invalid'] as const;
export type RefusalReason = (typeof refusalReasons)[number];
/** Why a user token was refused: its signature (or form), its audience, its expiry, or its claims. */
export const tokenCauses = ['signature', 'audience', 'expired', 'claims'] as const;
export type TokenCause = (typeof tokenCauses)[number];
