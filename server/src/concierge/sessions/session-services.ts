import type { StoreHealth } from '../../store/store-health.js';
import type { ConversationService } from '../conversations/conversation.service.js';
import type { ConversationHandling } from '../conversations/handling.js';
import type { DeploymentDirectory } from '../../deployments/deployment-context.js';
import type { InstallDiagnostics } from '../diagnostics/install-diagnostics.js';
import type { ConversationBus } from '../events/conversation-bus.js';
import type { PageService } from '../pages/page.service.js';
import type { SpeechRecognition } from '../speech/speech-recognition.js';
import type { SpeechSynthesis } from '../speech/speech-synthesis.js';
import type { TurnService } from '../turns/turn.service.js';
import type { CursorSource } from './event-cursor.js';

/** The services a session speaks for. */
export interface SessionServices {
  conversations: ConversationService;
  handling: ConversationHandling;
  turns: TurnService;
  /** What the visitor's page tells the agent, and the greeting rules that approached them (README, Greeting visitors first). */
  pages: Pick<PageService, 'event' | 'setContext' | 'approached'>;
  deployments: DeploymentDirectory;
  history: CursorSource;
  bus: ConversationBus;
  health: StoreHealth;
  diagnostics: InstallDiagnostics;
  speech: SpeechRecognition;
  synthesis: SpeechSynthesis;
}

/** How every session behaves. */
export interface SessionSettings {
  /** New conversations one `sub` may start on a deployment per 10 minutes. */
  newConversationsPerSub: number;
  helloTimeoutMs: number;
  /** How long a widget that reads nothing may hold back its conversation's events (see EventCursor). */
  drainTimeoutMs: number;
}
