export type DeploymentStatus = 'inactive' | 'active';
export type Environment = 'development' | 'staging' | 'production';
export type CallDirection = 'inbound' | 'outbound';

export interface DeploymentTable {
  id: string;
  customer_id: string;
  agent_id: string;
  environment: Environment;
  status: DeploymentStatus;
  call_direction: CallDirection;
  /** Pinned agent version; null follows the latest published one. */
  agent_version: number | null;
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
  created_at: string;
  updated_at: string;
}
