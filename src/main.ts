import { pino } from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { createServices } from './services.js';
import { startMetricsListener } from './http/metrics-listener.js';
import { scheduleRetention } from './ops/retention.js';
import { errorCode } from './util/caught.js';

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`vigil: configuration error: ${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const config = configOrExit();
  const started = performance.now();
  const log = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'], censor: '[redacted]' },
  });
  const services = await createServices(config, {
    logger: log,
    onBackendChange: (backend, degraded, reason) =>
      degraded
        ? log.warn({ backend, err: reason }, `${backend} unreachable: serving with per-instance limits and detection state (degraded)`)
        : log.info({ backend, ...(reason as object) }, `${backend} reachable again: shared state restored`),
  });
  const vigil = await buildApp(services);

  // The port is taken before anything is created: a start that cannot serve leaves no first account behind.
  try {
    await vigil.app.listen({ port: config.port, host: config.host });
  } catch (err) {
    if (errorCode(err) !== 'EADDRINUSE' && errorCode(err) !== 'EACCES') throw err;
    process.stderr.write(
      `vigil: cannot listen on ${config.host}:${config.port}: ${errorCode(err) === 'EADDRINUSE' ? 'another program uses this port' : 'permission denied'}. Set VIGIL_PORT (and VIGIL_HOST) to a free port, e.g. VIGIL_PORT=8081 npm start\n`,
    );
    await vigil.close();
    await services.shutdown();
    process.exit(1);
  }
  const first = await vigil.accounts.bootstrap(config.initialPlan);
  if (first) {
    process.stdout.write(
      [
        '',
        `Vigil created the first account (${first.account.id}, plan ${first.account.plan}). Its keys are shown this once:`,
        `  secret key:      ${first.secret}`,
        `  publishable key: ${first.publishable} (id ${first.publishableId})`,
        '',
        'The publishable key is for browsers and accepts no origin yet (a browser gets 403). Allow your site with',
        `  npx vigil keys set-origins ${first.publishableId} --origins https://app.example.com`,
        `or, with VIGIL_ADMIN_TOKEN set: PATCH /admin/keys/${first.publishableId} {"allowed_origins": ["https://app.example.com"]}`,
        '',
        'People sign in to the dashboard (/dashboard) as themselves. Add the first owner (the password is read from standard input):',
        `  read -s PW && printf '%s\\n' "$PW" | npx vigil members add --account ${first.account.id} --email you@example.com --role owner`,
        '',
      ].join('\n') + '\n',
    );
  }

  const stopRetention = config.retentionEnabled ? scheduleRetention(services.store, config.plans, services.clock, log) : () => undefined;
  const metricsListener =
    config.metricsPort === undefined
      ? undefined
      : await startMetricsListener(vigil.metrics, { host: config.metricsHost, port: config.metricsPort, token: config.metricsToken });
  // The enrichment data in use (files, versions) is logged here, not shown by the unauthenticated /readyz.
  log.info(
    {
      port: config.port,
      metricsPort: config.metricsPort,
      storage: services.store.kind,
      ...services.status?.(),
      startupMs: Math.round(performance.now() - started),
    },
    'vigil ready',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const stopStarted = performance.now();
    log.info({ signal }, 'shutting down: draining requests and flushing the commit group');
    const force = setTimeout(() => {
      log.error('shutdown took longer than 15 s; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    try {
      stopRetention();
      metricsListener?.close();
      await vigil.close();
      await services.shutdown();
      log.info({ signal, drainMs: Math.round(performance.now() - stopStarted) }, 'shutdown complete: requests drained, events committed, connections closed');
      log.flush();
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`vigil: failed to start: ${err instanceof Error && err.stack ? err.stack : String(err)}\n`);
  process.exit(1);
});
