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
      greeting: `Hello, I'm ${name}. How can I help you today?`,
      language: 'en-US',
      voice: { rate: 1, pitch: 1 },
      persona: { name, purpose },
      instructions: [
        `You are ${name}. Your purpose: ${purpose}`,
        'Answer briefly and in plain language; replies are read aloud.',
        'If you do not know, say so and offer to connect the visitor with a person.',
      ],
    };
  },
};
