-- Reserves a batch of events against an account's month; the same arithmetic as quota-math.ts.
-- KEYS[1]: the month's hash (fields used, dropped). ARGV: events, monthly cap, overage ('drop' refuses past the cap).
-- Reply: {accepted, dropped}, or {-1, 0} when the month is not seeded yet.
local used = redis.call('HGET', KEYS[1], 'used')
if not used then return { -1, 0 } end
used = tonumber(used)
local events = tonumber(ARGV[1])
local accepted = events
if ARGV[3] == 'drop' then
  local room = tonumber(ARGV[2]) - used
  if room < 0 then room = 0 end
  if accepted > room then accepted = room end
end
local dropped = events - accepted
if accepted > 0 then redis.call('HINCRBY', KEYS[1], 'used', accepted) end
if dropped > 0 then redis.call('HINCRBY', KEYS[1], 'dropped', dropped) end
return { accepted, dropped }
