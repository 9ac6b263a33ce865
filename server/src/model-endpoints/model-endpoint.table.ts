/** A customer's OpenAI-compatible endpoint for its agents' models (README, An agent without a server). */
export interface ModelEndpointTable {
  id: string;
  customer_id: string;
  name: string;
  /** `{base_url}/chat/completions` is called. */
  base_url: string;
  /** The API key sealed under the service's secrets key (see sealText), bound to the customer; null when none is sent. */
  api_key_sealed: string | null;
  /** The key's last 4 characters, the only part ever shown again. */
  api_key_last4: string | null;
  created_at: string;
  updated_at: string;
}
