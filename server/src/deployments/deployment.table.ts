export type DeploymentStatus = 'inactive' | 'active';
export type Environment = 'development' | 'staging' | 'production';
export type CallDirection = 'inbound' | 'outbound';
export const transcriptHookStatuses = ['active', 'disabled'] as const;
export type TranscriptHookStatus = (typeof transcriptHookStatuses)[number];

export interface DeploymentTable {
  id: string;
  customer_id: string;
  agent_id: string;
  environment: Environment;
  status: DeploymentStatus;
  call_direction: CallDirection;
  /** Pinned agent version; null follows the latest published one. */
  agent_version: number | null;
  /** JSON `[{version, weight}]`: new conversations split between published versions (README, Tests and analysis); null: none. */
  agent_versions: string | null;
  channel_config: string;
  engagement_rules: string;
  runtime_config: string;
  /**
   * Kept usable, not hashed: the service signs hooks and verifies HMACs with it. It leaves the
   * store only in the create and rotate responses.
   */
  signing_secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  deployed_at: string | null;
  /** `disabled` after a 410 Gone or 72 h of failures: its transcript events wait, none is sent, until enabled again. */
  transcript_hook_status: TranscriptHookStatus;
  transcript_hook_disabled_at: string | null;
  transcript_hook_disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}
