import { readFileSync } from 'node:fs';

/** The Lua scripts of the scale-out backends, one file each in ./lua/. */
export type LuaScriptName = 'sliding-window' | 'state-op' | 'quota-reserve' | 'quota-seed' | 'quota-adjust';

/**
 * Reads a script from the `lua` folder next to this module: src/redis/lua when run from the
 * sources, dist/src/redis/lua in the build (the build copies the folder, since tsc copies only
 * what it compiles). Read once per backend module at load, so a missing file stops the service
 * at start rather than on the first request.
 */
export function luaScript(name: LuaScriptName): string {
  return readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
}
