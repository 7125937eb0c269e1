-- Adds signed deltas to a seeded month, never below 0 (release gives back; absorb adds what a stand-in counted).
-- KEYS[1]: the month's hash. ARGV: delta of used, delta of dropped. Reply: 1, or 0 when the month is not seeded.
local used = redis.call('HGET', KEYS[1], 'used')
if not used then return 0 end
local u = tonumber(used) + tonumber(ARGV[1])
if u < 0 then u = 0 end
local d = tonumber(redis.call('HGET', KEYS[1], 'dropped') or '0') + tonumber(ARGV[2])
if d < 0 then d = 0 end
redis.call('HSET', KEYS[1], 'used', u, 'dropped', d)
return 1
