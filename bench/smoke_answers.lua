-- A smoke run's wrk (bench/harness.py `SMOKE_ANSWERS`): each thread stops reading after this
-- many answers. wrk itself still runs for its whole duration, idle: the smoke shows that the
-- benchmark works end to end, and the suite it runs in has no CPU to spare for a second of load.
local left

function init(args)
   left = tonumber(args[1])
end

function response(status, headers, body)
   left = left - 1
   if left <= 0 then
      wrk.thread:stop()
   end
end
