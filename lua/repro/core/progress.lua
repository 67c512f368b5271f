-- Progress on stderr: one line rewritten in place on a terminal, plain periodic lines
-- otherwise (logs, CI).
local host = require "repro.host"
local printable = require("repro.core.base").printable
local M = {}
local P = {}
P.__index = P

local tty = host.isatty(2)

-- A message on a line of its own (on a terminal, over the status line); its text goes
-- through base.printable (newlines kept), so data quoted in it never drives the terminal.
function M.say(fmt, ...)
  if tty then io.stderr:write("\r\27[K") end
  io.stderr:write(printable(string.format(fmt, ...), true), "\n")
  io.stderr:flush()
end

function M.fmt_time(s)
  if not s or s ~= s or s == math.huge then return "?" end
  s = math.floor(s + 0.5)
  if s >= 3600 then return string.format("%dh%02dm", s // 3600, (s % 3600) // 60) end
  if s >= 60 then return string.format("%dm%02ds", s // 60, s % 60) end
  return string.format("%ds", s)
end

-- total: steps of this run; tokens: tokens per step; label: printed first.
function M.new(total, tokens, label)
  return setmetatable({ total = total, tokens = tokens, label = label or "",
    every = math.max(1, total // 10), shown = false }, P)
end

-- The line of 0-based step: on a terminal over the last one, else every tenth of the run
-- on a line of its own.  suffix (optional) is appended (e.g. the study ETA).
function P:update(step, loss, lr, suffix)
  local now = host.now()
  self.first = self.first or { step = step, t = now }
  local done = step - self.first.step
  local rate = done > 0 and done / (now - self.first.t) or nil
  if not tty and (step + 1) % self.every ~= 0 and step + 1 ~= self.total then return end
  local eta = rate and (self.total - step - 1) / rate or nil
  local text = string.format("%sstep %d/%d  loss %.4f  lr %.2e  %s tok/s  ETA %s%s",
    self.label, step + 1, self.total, loss, lr,
    rate and string.format("%.0f", rate * self.tokens) or "?", M.fmt_time(eta), suffix or "")
  io.stderr:write(tty and "\r" or "", text, tty and "\27[K" or "\n")
  io.stderr:flush()
  self.shown = tty
end

function P:finish()
  if self.shown then io.stderr:write("\n") end
end

return M
