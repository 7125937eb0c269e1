#!/usr/bin/env node
// The `vigil-agent` command. `npm install` builds dist/ (the prepare script).
import '../dist/src/main.js';
