-- Failure policies: a message larger than MaxMessageSize with
-- OnOversize tempfail gets 451 4.7.1; with OnOversize quarantine it is
-- accepted, held, and marked "X-Slop-Status: Unknown, reason=oversize";
-- with the default (scan) the prefix is scanned and tagged as usual.
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
    -- miltertest only stops the last filter it started; stop this one.
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

run("tempfail", { "ReplyEnable no", "MaxMessageSize 64K", "OnOversize tempfail" }, function(conn)
    local rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "TMP1", body = big })
    lib.check("oversize: answered with a reply code", rc == SMFIR_REPLYCODE, rc)
    lib.check("oversize: 451 4.7.1 deferred", mt.eom_check(conn, MT_SMTPREPLY, "451", "4.7.1",
        "Message deferred by slop-milter (oversize), try again later"))
    rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "TMP2" })
    lib.check("small message after a tempfail accepted",
        rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
end)

run("oversize-quarantine", { "ReplyEnable no", "MaxMessageSize 64K", "OnOversize quarantine" },
    function(conn)
        local rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "TMP3", body = big })
        lib.check("oversize quarantine: accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
        lib.check("oversize quarantine: held", mt.eom_check(conn, MT_QUARANTINE))
        local st = lib.header(conn, "X-Slop-Status") or ""
        lib.check("oversize quarantine: X-Slop-Status Unknown, reason=oversize",
            st:match("^Unknown, reason=oversize") ~= nil, st)
    end)

run("oversize-scan", { "ReplyEnable no", "MaxMessageSize 64K", "TagThreshold 3" }, function(conn)
    local _, body = lib.read_message(MSGS .. "/lock-swap.eml")
    local rc = lib.send(conn, MSGS .. "/lock-swap.eml", { qid = "TMP4", body = body .. big })
    lib.check("oversize scan: accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
    local st = lib.header(conn, "X-Slop-Status") or ""
    lib.check("oversize scan: the prefix was scanned and tagged", st:match("^Yes, ") ~= nil, st)
end)

lib.finish()
