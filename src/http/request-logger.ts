import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Fastify's request log lines without the two routine ones. "incoming request" and "request
 * completed" at info would be two log records per event at thousands of events a second; requests
 * are counted and timed in /metrics, and VIGIL_LOG_LEVEL=debug adds one access line per request
 * (app.ts). Failed responses and stream errors are still logged, with the request id.
 */
export class QuietRequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) super.requestCompleted(error, request, reply);
  }
}

/**
 * `request.log` without a pino child per request. Fastify makes a child logger (binding the
 * request id) for every request, and almost none logs anything (see QuietRequestLog); the child
 * and the two routine lines are a large share of a cheap request's CPU. This one makes
 * the child on the first log call at an enabled level, and answers every other call with nothing.
 */
class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
  ) {}

  get level(): LevelWithSilentOrString {
    return (this.made ?? this.parent).level;
  }

  set level(level: LevelWithSilentOrString) {
    this.real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.log('error', args);
  }
  warn(...args: unknown[]): void {
    this.log('warn', args);
  }
  info(...args: unknown[]): void {
    this.log('info', args);
  }
  debug(...args: unknown[]): void {
    this.log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.log('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  private real(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings);
    return this.made;
  }

  private log(level: Level, args: unknown[]): void {
    if (!enabled(this.made ?? this.parent, level)) return;
    (this.real()[level] as (...a: unknown[]) => void)(...args);
  }
}

/** pino's isLevelEnabled; a logger without it gets every call. */
function enabled(logger: FastifyBaseLogger, level: Level): boolean {
  const check = (logger as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return check === undefined || check.call(logger, level);
}

/**
 * Fastify's `childLoggerFactory`. A route with its own level or serializers gets a real child
 * at once (none of Vigil's routes has them).
 */
export function requestLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options);
  return new RequestLogger(logger, bindings);
}

/** Query parameters whose values are one-time secrets: an OpenID provider's code and state. */
const SECRET_QUERY = /([?&](?:code|state)=)[^&]*/g;

/**
 * The request's URL as logs show it: a single-use token in the path (an invitation, a password
 * reset) or in the query (single sign-on's code and state) is replaced, since whoever reads the
 * log must not be able to use it.
 */
export function loggedUrl(request: FastifyRequest): string {
  const token = (request.params as Readonly<Record<string, unknown>> | undefined)?.token;
  const url = request.url.replace(SECRET_QUERY, '$1[token]');
  return typeof token === 'string' && token.length > 0 ? url.split(encodeURIComponent(token)).join('[token]').split(token).join('[token]') : url;
}
