/**
 * Concierge for your server (README, Writing your customer server): verify the calls the service
 * makes, mint visitors' tokens, reply (whole or streamed), and answer a hook in a few lines.
 */
export {
  type ClientOptions,
  ConciergeClient,
  type ReplyAction,
  type ReplyResult,
  type RetryOptions,
  type TurnRef,
} from './client.js';
export { type DeliveryStore, type HookResponse, MemoryDeliveryStore } from './deliveries.js';
export { ConciergeRequestError, HookVerificationError, type HookVerificationCode } from './errors.js';
export * from './events.js';
export { createHookHandler, fetchHandler, type HookHandlerOptions, nodeHandler, type TurnAnswer } from './handler.js';
export {
  type HeaderSource,
  type HookEvent,
  isToolCall,
  isTurnHook,
  signBody,
  verifyHook,
  type VerifyOptions,
} from './signatures.js';
export { mintUserToken, type UserTokenOptions } from './tokens.js';
