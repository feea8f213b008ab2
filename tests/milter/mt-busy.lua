-- The memory budget (MaxMemory 64K, a message charged twice its size):
-- a body that outgrows it is dropped and the message answered by OnBusy
-- (default tempfail 451 4.7.1, reason busy; quarantine: held, tagged
-- "Unknown, reason=busy"); a size announced at MAIL (SIZE= or the
-- {msg_size} macro) that does not fit is answered at MAIL already. The
-- budget comes back: a small message afterwards is accepted.
local lib = dofile(MSGS .. "/../lib.lua")
local big = {}
local line = string.rep("filler text that carries no signal at all, ", 2) .. "\r\n"
for i = 1, 1200 do
    big[i] = line
end
big = table.concat(big)

local function run(name, extra, fn)
    local conf = WORK .. "/" .. name .. ".conf"
    lib.write_conf(conf, extra)
    local conn = lib.start(conf)
    fn(conn)
    mt.disconnect(conn)
    local f = io.open(WORK .. "/slop-milter.pid", "r")
    if f then
        local pid = f:read("l")
        f:close()
        os.execute("kill " .. pid .. " 2>/dev/null")
        for _ = 1, 50 do
            if os.rename(lib.sock, lib.sock) == nil then
                break
            end
            mt.sleep(0.1)
        end
    end
end

run("busy", { "ReplyEnable no", "MaxMemory 64K" }, function(conn)
    local rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "BSY1", body = big })
    lib.check("body past the budget: answered with a reply code", rc == SMFIR_REPLYCODE, rc)
    lib.check("body past the budget: 451 4.7.1 busy", mt.eom_check(conn, MT_SMTPREPLY, "451",
        "4.7.1", "Message deferred by slop-milter (busy), try again later"))
    rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "BSY2" })
    lib.check("budget released: small message accepted",
        rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
    -- An announced size that cannot fit: refused at MAIL.
    mt.macro(conn, SMFIC_MAIL, "i", "BSY3")
    lib.check("SIZE= past the budget: mailfrom sent",
        mt.mailfrom(conn, "casey@example.test", "SIZE=1000000") == nil)
    rc = mt.getreply(conn)
    lib.check("SIZE= past the budget: reply code at MAIL", rc == SMFIR_REPLYCODE, rc)
    mt.abort(conn)
    mt.macro(conn, SMFIC_MAIL, "i", "BSY4", "{msg_size}", "1000000")
    lib.check("{msg_size} past the budget: mailfrom sent",
        mt.mailfrom(conn, "casey@example.test") == nil)
    rc = mt.getreply(conn)
    lib.check("{msg_size} past the budget: reply code at MAIL", rc == SMFIR_REPLYCODE, rc)
    mt.abort(conn)
    rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "BSY5" })
    lib.check("after MAIL refusals: small message accepted",
        rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
end)

run("busy-quarantine", { "ReplyEnable no", "MaxMemory 64K", "OnBusy quarantine" },
    function(conn)
        local rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "BSY6", body = big })
        lib.check("busy quarantine: accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
        lib.check("busy quarantine: held", mt.eom_check(conn, MT_QUARANTINE))
        local st = lib.header(conn, "X-Slop-Status") or ""
        lib.check("busy quarantine: X-Slop-Status Unknown, reason=busy",
            st:match("^Unknown, reason=busy") ~= nil, st)
    end)

lib.finish()
