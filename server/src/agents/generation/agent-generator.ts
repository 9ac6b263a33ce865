/**
 * What turns a name and description into an agent spec. The default is offline and
 * deterministic; a model-backed generator plugs in through the same interface.
 */
export interface AgentGenerator {
  generate(input: GenerationInput, control: GenerationControl): Promise<Record<string, unknown>>;
}

export interface GenerationControl {
  reportProgress(percent: number): Promise<void>;
  /** Aborted when the node stops: the job goes back to the queue and the result is not wanted. */
  signal: AbortSignal;
}

export interface GenerationInput {
  name: string;
  description: string | null;
}

export const templateGenerator: AgentGenerator = {
  async generate({ name, description }, { reportProgress }) {
    const purpose = description?.trim() || `help visitors on behalf of ${name}`;
    await reportProgress(50);
    return {
      greeting: `Hello, ${ROLE.test(name) ? 'this is' : "I'm"} ${spoken(name)}. How can I help you today?`,
      language: 'en-US',
      voice: { rate: 1, pitch: 1 },
      persona: { name, purpose },
      instructions: [
        `You are ${spoken(name)}. Your purpose: ${purpose}`,
        'Answer briefly and in plain language; replies are read aloud.',
        'If you do not know, say so and offer to connect the visitor with a person.',
      ],
    };
  },
};

/**
 * A role ("Harbor Hotel concierge", "Front desk") is introduced with "the", in the case a sentence
 * reads it ("the front desk"; a name's own capitals, "Harbor Hotel", "IT", stay); a persona's name
 * ("Ava") as it is.
 */
function spoken(name: string): string {
  if (!ROLE.test(name)) return name;
  const role = name.replace(/^the\s+/i, '');
  const [first = '', ...rest] = role.split(/\s+/);
  const sentenceCase = rest.every((word) => word === word.toLowerCase()) && /^\p{Lu}\p{Ll}*$/u.test(first);
  return `the ${sentenceCase ? first.toLowerCase() + role.slice(first.length) : role}`;
}

const ROLE = /\b(?:concierge|desk|assistant|agent|bot|team|helper|guide|support|reception|service|host)$/i;
