import { loadConfig, shippedKeyVariables } from './config';
import { createLogger } from './log';
import { scrubStartupEnvironment, SECRET_VARIABLES } from './secret-environment';
import { startService } from './service';

let config;
try {
  config = loadConfig();
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
const log = createLogger(config.logLevel);
const notScrubbed = scrubStartupEnvironment(SECRET_VARIABLES);
if (notScrubbed !== undefined) log.warn('keys stay readable in the start-up environment (/proc/self/environ)', { reason: notScrubbed });
const shipped = shippedKeyVariables(config);
if (shipped.length > 0) {
  log.warn('development keys from .env.defaults are in use; set your own before exposing the service', { variables: shipped });
}

const starting = startService(config, log).catch((err: unknown) => {
  log.error('start failed', { err });
  process.exit(1);
});

// Installed before the service listens: a signal that arrives while it starts (or just after
// its 'listening' line) stops it once started, instead of killing it with the default action.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    log.info('signal received', { signal });
    starting
      .then((service) => service.stop())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          log.error('stop failed', { err });
          process.exit(1);
        },
      );
  });
}
