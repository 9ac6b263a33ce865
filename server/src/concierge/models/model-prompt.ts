import type { ConversationRow } from '../conversations/conversation.repository.js';
import type { TurnRow } from '../conversations/turn.repository.js';
import type { DeploymentContext } from '../deployment-context.js';
import type { StoredFrame } from '../events/event.repository.js';
import type { ChatMessage } from './chat-completions.js';
import type { Passage } from '../../knowledge/knowledge.service.js';
import type { TurnPage } from '../pages/page.service.js';
import type { TurnContext } from '../turns/responder.js';

/** The conversation so far is given to the model within this many characters, the oldest dropped first. */
export const HISTORY_BUDGET_CHARS = 16_000;

/** What the visitor heard of a spoken reply, where the widget said (README, The agent's own voice). */
export interface HeardReply {
  heard_text: string | null;
  heard_interrupted: number | null;
}

/**
 * The system message (README, An agent without a server): the agent's persona and instructions,
 * the language to answer in, who the visitor is as the customer's token says, the time, and the
 * page they are on with what it told (README, Greeting visitors first).
 */
export function systemMessage(
  dep: DeploymentContext,
  conversation: ConversationRow,
  turn: TurnRow,
  now: Date,
  { passages = [], page }: Partial<Pick<TurnContext, 'page'>> & { passages?: readonly Passage[] | undefined } = {},
): string {
  const language = turn.language ?? dep.agent.language;
  const lines = [
    dep.prompt.persona,
    dep.prompt.instructions,
    `Answer in ${languageName(language)} (${language}).`,
    'Your replies are shown in a chat and may be read aloud: write plain sentences, no Markdown, no lists.',
    conversation.user_name ? `The visitor's name: ${conversation.user_name}.` : '',
    conversation.user_ctx ? `What the site tells about the visitor (JSON): ${conversation.user_ctx}` : '',
    `Now: ${now.toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
    ...(page ? pageLines(page) : []),
    // The agent's knowledge base (README, Answers from your documents): what to answer from.
    passages.length
      ? `Answer from these passages of the agent's knowledge base when they hold the answer; say so when they do not. Put the number of each passage you answer from in brackets after the sentence that uses it, like [1]: the visitor is shown a link to it, never the number:\n${passages
          .map((p, i) => `[${i + 1}] ${p.title}${p.heading ? ` › ${p.heading}` : ''}: ${p.text}`)
          .join('\n')}`
      : '',
  ];
  return lines.filter(Boolean).join('\n');
}

/** Where the visitor is (README, Greeting visitors first): the page, its context, what they did on it since their last turn. */
function pageLines({ url, title, context, events }: TurnPage): string[] {
  return [
    url ? `The visitor is on the page "${title ?? ''}" (${url}).` : '',
    context ? `What the page tells about the visit (JSON): ${JSON.stringify(context)}` : '',
    events.length
      ? `What the visitor did on the page since their last message (JSON, oldest first): ${JSON.stringify(events.map(({ name, data }) => ({ name, data })))}`
      : '',
  ];
}

/**
 * The conversation as the model is told it: the visitor's turns, the agent's replies as the
 * visitor heard them (cut where they interrupted), a person's messages marked as theirs; newest
 * kept first within {@link HISTORY_BUDGET_CHARS}, the current turn always.
 */
export function conversationMessages(
  talk: readonly StoredFrame[],
  heard: ReadonlyMap<string, HeardReply>,
  budget = HISTORY_BUDGET_CHARS,
): ChatMessage[] {
  const messages = talk.flatMap((stored): ChatMessage[] => {
    const frame = JSON.parse(stored.frame) as { type: string; text: string; name?: string; turn_id?: string };
    if (frame.type === 'turn_accepted') return [{ role: 'user', content: frame.text }];
    if (frame.name)
      return [{ role: 'assistant', content: `[${frame.name}, a person from the team, wrote:] ${frame.text}` }];
    const spoken = frame.turn_id ? heard.get(frame.turn_id) : undefined;
    if (spoken?.heard_interrupted === 1)
      return [{ role: 'assistant', content: `${spoken.heard_text ?? ''} [the visitor interrupted here]`.trim() }];
    return [{ role: 'assistant', content: frame.text }];
  });
  const kept: ChatMessage[] = [];
  let used = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    used += (message.content ?? '').length;
    if (used > budget && kept.length) break;
    kept.unshift(message);
  }
  return kept;
}

function languageName(tag: string): string {
  try {
    return new Intl.DisplayNames(['en'], { type: 'language' }).of(tag) ?? tag;
  } catch {
    return tag;
  }
}
