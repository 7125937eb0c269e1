import { cliMain } from './cli.js';

process.exitCode = await cliMain(process.argv.slice(2));
