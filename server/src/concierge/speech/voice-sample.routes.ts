import { z } from 'zod';
import type { Db } from '../../database.js';
import { defineRoute, type RouteDef } from '../../http/route.js';
import { idParams } from '../../shared/schemas.js';
import type { SpeechSynthesis } from './speech-synthesis.js';
import { voiceSample, voiceSampleBody } from './voice-sample.js';

/** `POST /api/v1/agents/{id}/voice-sample` (README, The agent's own voice). */
export function voiceSampleRoute(parts: { db: Db; synthesis: SpeechSynthesis }): RouteDef {
  return defineRoute({
    method: 'post',
    path: '/api/v1/agents/:id/voice-sample',
    operationId: 'sampleAgentVoice',
    summary: "Hear a sentence in the agent's voice on this service's synthesiser (a WAV file)",
    tag: 'Agents',
    params: idParams,
    body: voiceSampleBody,
    bodyOptional: true,
    errors: ['not_found', 'invalid_state', 'unavailable'],
    success: {
      status: 200,
      description:
        "16-bit mono WAV at the synthesiser's rate. 409 `invalid_state` when the service has no voice of its own; 503 `unavailable` when its synthesiser fails",
      data: z.string().meta({ format: 'binary' }),
      contentType: 'audio/wav',
    },
    handler: async ({ principal, params, body }) => ({
      data: await voiceSample(parts, principal.customerId, params.id, body),
    }),
  });
}
