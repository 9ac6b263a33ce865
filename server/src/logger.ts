import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Requests are logged without headers or bodies, so keys, tokens and secrets have no way in;
 * the redaction list is the second line of defence for anything logged by hand.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: [
          'authorization',
          'key',
          'apiKey',
          'api_key',
          'token',
          'secret',
          'signing_secret',
          'previous_secret',
          '*.authorization',
          '*.key',
          '*.token',
          '*.signing_secret',
          'req.headers',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
