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
      greeting: `Hello, I'm ${spoken(name)}. How can I help you today?`,
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

/** A role ("Harbor Hotel concierge", "Front desk") is introduced with "the"; a persona's name ("Ava") as it is. */
function spoken(name: string): string {
  return ROLE.test(name) && !/^the\s/i.test(name) ? `the ${name}` : name;
}

const ROLE = /\b(?:concierge|desk|assistant|agent|bot|team|helper|guide|support|reception|service|host)$/i;
