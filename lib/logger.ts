import { pino, type Level } from 'pino';

import { currentRequestId } from './request-context.js';

/**
 * Where the server reports. The standalone server writes structured JSON (`createLogger`); a host
 * passes its own. Fields are what a line is about (ids, statuses, durations), never a token, a
 * secret or a code.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, error?: unknown, fields?: Record<string, unknown>): void;
  /** Lines an operator turns on to follow one request or delivery (`LOG_LEVEL=debug`). */
  debug?(message: string, fields?: Record<string, unknown>): void;
}

const withFields = (message: string, fields?: Record<string, unknown>) =>
  fields && Object.keys(fields).length > 0 ? `${message} ${JSON.stringify(fields)}` : message;

/** Free text on the console: for hosts and tests that want it. */
export const consoleLogger: Logger = {
  info: (message, fields) => console.log(withFields(message, fields)),
  warn: (message, fields) => console.warn(withFields(message, fields)),
  error: (message, error, fields) => console.error(withFields(message, fields), error ?? ''),
};

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export const logFormats = ['json', 'pretty'] as const;

/**
 * Structured logs with pino: one JSON object a line (`LOG_FORMAT=pretty` for people, through
 * pino-pretty), at `LOG_LEVEL`. Every line written while a request is served carries its
 * `requestId`, as do the lines of the webhook deliveries its writes announced.
 */
export function createLogger({
  level = 'info',
  format = 'json',
  destination,
}: { level?: (typeof logLevels)[number]; format?: (typeof logFormats)[number]; destination?: NodeJS.WritableStream } = {}): Logger {
  const base = pino(
    {
      level,
      base: { service: 'oidc-identity' },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: () => {
        const requestId = currentRequestId();
        return requestId ? { requestId } : {};
      },
      ...(format === 'pretty' &&
        !destination && { transport: { target: 'pino-pretty', options: { colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l' } } }),
    },
    ...(destination ? [destination] : []),
  );
  const write = (at: Level, message: string, fields?: Record<string, unknown>) => base[at](fields ?? {}, message);
  return {
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    debug: (message, fields) => write('debug', message, fields),
    error: (message, error, fields) => base.error({ ...fields, ...(error !== undefined && { err: error }) }, message),
  };
}
