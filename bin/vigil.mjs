#!/usr/bin/env node
// The `vigil` command. `npm install` builds dist/ (the prepare script).
import { cliMain } from '../dist/src/cli/main.js';

process.exitCode = await cliMain(process.argv.slice(2));
