// The script-tag build (dist/vigil.iife.min.js): `<script src=".../vigil.iife.min.js">` defines
// the global `Vigil` (the client class) for pages without a bundler or ES modules.
import { Vigil } from './index.js';

(globalThis as unknown as { Vigil: typeof Vigil }).Vigil = Vigil;
