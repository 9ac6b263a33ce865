/**
 * What a person reads once the service is up: where things run, the secrets shown this once,
 * and what to do next. Plain lines on stdout whatever the log level (scripts wait for the
 * `Listening on` and `API key:` lines); the JSON log lines come after it.
 */

/** A later start's line where the first start printed the key and the console link. */
export const NO_NEW_KEY =
  "(The bootstrap key and console link were printed on this store's first start. Another customer: npm run admin -- create-customer --name NAME --email EMAIL)";

/** Where the server of README, "Your first concierge" listens: the addresses its hook URL may name. */
export const FIRST_SERVER_HOSTS = ['127.0.0.1:3000', 'localhost:3000'];

/** Where a language model on this machine listens by default: Ollama, llama.cpp's server, vLLM (README, An agent without a server). */
export const LOCAL_MODEL_PORTS = [11434, 8080, 8000];

/**
 * Who recognises visitors' speech (README, "Voice in every browser"), from the service's settings:
 * a speech server, PocketSphinx (said plainly to be poor), or only the browsers that can.
 */
export function hearingLine(env: NodeJS.ProcessEnv): string {
  if (env.SPEECH_TO_TEXT_URL)
    return `Speech recognition: the speech server at ${new URL(env.SPEECH_TO_TEXT_URL).origin} (SPEECH_TO_TEXT_URL), hands-free where it hears (README, "Hands-free voice")`;
  if (env.SPEECH_TO_TEXT === 'pocketsphinx')
    return 'Speech recognition: PocketSphinx on this machine, English only and often wrong, in browsers that cannot recognise speech themselves (Firefox), hands-free (README, "Hands-free voice"); for a good one, set SPEECH_TO_TEXT_URL to a Whisper server (README, "Voice in every browser")';
  return 'Speech recognition: only where the browser has its own (Chrome); install pocketsphinx pocketsphinx-en-us, or set SPEECH_TO_TEXT_URL, for every browser (README, "Voice in every browser")';
}

/**
 * Whose voice the agents speak with (README, "The agent's own voice"), from the service's
 * settings: a speech server, espeak-ng (said plainly to be robotic), or the browser's.
 */
export function voiceLine(env: NodeJS.ProcessEnv): string {
  if (env.TEXT_TO_SPEECH_URL)
    return `Voice: the speech server at ${new URL(env.TEXT_TO_SPEECH_URL).origin} (TEXT_TO_SPEECH_URL)`;
  if (env.TEXT_TO_SPEECH === 'espeak-ng')
    return 'Voice: espeak-ng, robotic but the same in every browser; for a natural voice, set TEXT_TO_SPEECH_URL to a Kokoro or Piper server (README, "The agent\'s own voice")';
  return "Voice: the browser's (install espeak-ng, or set TEXT_TO_SPEECH_URL, for the service's own: README, \"The agent's own voice\")";
}

/** The next three steps, for the service alone or beside the demo hotel. */
export function nextSteps({ url, firstStart }: { url: string; firstStart: boolean }, demoUrl?: string): string {
  const steps = [
    firstStart
      ? 'Keep the API key: it is shown this once. Open the console sign-in link to choose a password for owner@localhost.'
      : 'Sign in to the console (a forgotten password: npm run admin -- create-user --email EMAIL).',
    demoUrl
      ? `Talk to the demo hotel's concierge at ${demoUrl} (the round button, bottom right); ${demoUrl}/qa shows every call on the wire.`
      : `The API, described: ${url}/openapi.json`,
    'Your own concierge on your own page: README.md, "Your first concierge" (ten minutes, copy-paste).',
  ];
  // Where the walkthrough's server may be called: allowed by `npm start`, said to need the setting otherwise.
  const firstServer = demoUrl
    ? `     Its server on port 3000 gets this service's hooks: npm start allows ${FIRST_SERVER_HOSTS.join(' and ')} as it does the demo's port,\n     and a model on this machine (Ollama ${LOCAL_MODEL_PORTS[0]}, llama.cpp ${LOCAL_MODEL_PORTS[1]}, vLLM ${LOCAL_MODEL_PORTS[2]}) may answer as a model endpoint.`
    : `     Its server on this machine gets hooks once allowed: HOOK_ALLOWED_HOSTS=*@${FIRST_SERVER_HOSTS[0]} (any address not public needs it).`;
  return `\nNext:\n${steps.map((step, i) => `  ${i + 1}. ${step}`).join('\n')}\n${firstServer}\nStop with Ctrl-C. Log lines follow (LOG_LEVEL=warn for fewer).\n\n`;
}
