-- Shared helpers for the miltertest scripts (loaded with dofile()).
--
-- run-miltertest.sh passes, with miltertest -D: SLOP_MILTER (the daemon
-- binary), RULES (rules directory), WORK (a fresh private directory),
-- MSGS (tests/milter/msgs). Each script writes its configuration files
-- into WORK, starts the daemon with mt.startfilter (miltertest stops it
-- with SIGTERM at the end), and finishes with lib.finish(), which prints
-- "N passed, N failed" and raises an error when anything failed, so
-- miltertest exits non-zero.

local lib = {}

lib.passed = 0
lib.failed = 0
lib.sock = WORK .. "/milter.sock"

function lib.check(name, ok, detail)
    if ok then
        lib.passed = lib.passed + 1
        mt.echo("ok: " .. name)
    else
        lib.failed = lib.failed + 1
        mt.echo("FAIL: " .. name .. (detail and (" (" .. tostring(detail) .. ")") or ""))
    end
end

-- A reload (SIGUSR1) takes effect when the daemon has read the new file
-- and built its rules, which on a loaded machine can take longer than any
-- fixed sleep. lib.eventually(fn) calls fn() once a second until it
-- returns true, at most `tries` times (default 30), and returns whether
-- it ever did: the check then fails only when the reload never shows.
function lib.eventually(fn, tries)
    for _ = 1, tries or 30 do
        if fn() then
            return true
        end
        mt.sleep(1)
    end
    return false
end

function lib.finish()
    mt.echo(string.format("%d passed, %d failed", lib.passed, lib.failed))
    if lib.failed > 0 then
        error("failures")
    end
end

-- Configuration text: the keys every script shares, then extra lines.
function lib.write_conf(path, extra)
    local f = assert(io.open(path, "w"))
    f:write("Socket unix:" .. lib.sock .. "\n")
    f:write("SocketMode 0600\n")
    f:write("Syslog no\n")
    f:write("RulesDir " .. RULES .. "\n")
    f:write("StateDir " .. WORK .. "/state\n")
    f:write("PidFile " .. WORK .. "/slop-milter.pid\n")
    for _, line in ipairs(extra or {}) do
        f:write(line .. "\n")
    end
    f:close()
end

-- Start the daemon and wait (bounded) until its socket accepts.
function lib.start(conf)
    os.remove(lib.sock)
    mt.startfilter(SLOP_MILTER, "-f", "-c", conf)
    return lib.connect()
end

function lib.connect()
    local conn = mt.connect("unix:" .. lib.sock, 100, 0.1)
    if conn == nil then
        error("cannot connect to " .. lib.sock)
    end
    if mt.conninfo(conn, "client.example.test", "192.0.2.10") ~= nil then
        error("mt.conninfo() failed")
    end
    if mt.getreply(conn) ~= SMFIR_CONTINUE then
        error("mt.conninfo(): unexpected reply")
    end
    return conn
end

-- Read an RFC 5322 file: a list of {name, value} (continuation lines kept
-- with their folding, as an MTA passes them) and the body with CRLF.
function lib.read_message(path)
    local f = assert(io.open(path, "r"))
    local text = f:read("a")
    f:close()
    text = text:gsub("\r\n", "\n")
    local head, body = text:match("^(.-)\n\n(.*)$")
    if head == nil then
        head, body = text, ""
    end
    local headers = {}
    for line in (head .. "\n"):gmatch("(.-)\n") do
        if line:match("^[ \t]") and #headers > 0 then
            headers[#headers][2] = headers[#headers][2] .. "\r\n" .. line
        else
            local name, value = line:match("^([^:]+):[ \t]?(.*)$")
            if name then
                headers[#headers + 1] = { name, value }
            end
        end
    end
    return headers, (body:gsub("\n", "\r\n"))
end

-- Send one message on conn. opts: from, rcpts (list), qid, mail_macros
-- (name, value, ... sent with MAIL FROM besides "i"), extra_headers
-- (list of {name, value} sent first), subject (replaces Subject), body
-- (replaces the body). Returns the reply code of end-of-message.
function lib.send(conn, path, opts)
    opts = opts or {}
    local headers, body = lib.read_message(path)
    mt.macro(conn, SMFIC_MAIL, "i", opts.qid or "TESTQID", table.unpack(opts.mail_macros or {}))
    if mt.mailfrom(conn, opts.from or "casey@example.test") ~= nil then
        error("mt.mailfrom() failed")
    end
    for _, r in ipairs(opts.rcpts or { "security@slop.test" }) do
        if mt.rcptto(conn, r) ~= nil then
            error("mt.rcptto() failed")
        end
    end
    for _, h in ipairs(opts.extra_headers or {}) do
        if mt.header(conn, h[1], h[2]) ~= nil then
            error("mt.header() failed")
        end
    end
    for _, h in ipairs(headers) do
        local v = h[2]
        if opts.subject and h[1]:lower() == "subject" then
            v = opts.subject
        end
        if mt.header(conn, h[1], v) ~= nil then
            error("mt.header() failed")
        end
    end
    if mt.eoh(conn) ~= nil then
        error("mt.eoh() failed")
    end
    body = opts.body or body
    -- The milter protocol carries at most 64 KB per body chunk.
    local pos = 1
    while pos <= #body do
        if mt.bodystring(conn, body:sub(pos, pos + 32767)) ~= nil then
            error("mt.bodystring() failed")
        end
        -- SKIP: the filter has seen enough body (its size cap); any
        -- other answer ends the message here.
        local r = mt.getreply(conn)
        if SMFIR_SKIP ~= nil and r == SMFIR_SKIP then
            break
        elseif r ~= SMFIR_CONTINUE then
            return r
        end
        pos = pos + 32768
    end
    if mt.eom(conn) ~= nil then
        error("mt.eom() failed")
    end
    return mt.getreply(conn)
end

-- A header we added, whether with smfi_addheader or smfi_insheader.
function lib.added(conn, name)
    return mt.eom_check(conn, MT_HDRADD, name) or mt.eom_check(conn, MT_HDRINSERT, name)
end

function lib.header(conn, name)
    return mt.getheader(conn, name, 0)
end

-- Checks shared by every scanned, accepted message.
function lib.check_scan_headers(conn, what, want_yes)
    local status = lib.header(conn, "X-Slop-Status")
    local score = lib.header(conn, "X-Slop-Score")
    lib.check(what .. ": X-Slop-Status added", status ~= nil)
    lib.check(what .. ": X-Slop-Score added", score ~= nil)
    if status == nil or score == nil then
        return nil
    end
    local yn, s, req = status:match("^(%a+), score=(%-?[%d.]+) required=(%-?[%d.]+) tests=")
    lib.check(what .. ": X-Slop-Status has SpamAssassin's shape", yn ~= nil, status)
    lib.check(what .. ": X-Slop-Status carries version=", status:find(" version=", 1, true) ~= nil,
        status)
    lib.check(what .. ": status says " .. (want_yes and "Yes" or "No"),
        yn == (want_yes and "Yes" or "No"), status)
    lib.check(what .. ": X-Slop-Score equals the status score", s ~= nil and
        tonumber(score) == tonumber(s), score .. " vs " .. tostring(s))
    return tonumber(score), status
end

-- Every physical line of a folded header value is short, and continuation
-- lines start with white space.
function lib.check_folding(what, name, value)
    local first = true
    local ok, longest = true, 0
    for line in (value .. "\n"):gmatch("(.-)\r?\n") do
        local len = #line + (first and (#name + 2) or 0)
        if len > longest then
            longest = len
        end
        if len >= 998 then
            ok = false
        end
        if not first and not line:match("^[ \t]") then
            ok = false
        end
        first = false
    end
    lib.check(what .. ": " .. name .. " folded correctly (longest line " .. longest .. ")", ok, value)
end

-- What `slop-milter -t` says it would do with path under conf: a table
-- of its "key: value" lines, in order ({key, value} pairs).
function lib.preview(conf, path, from, rcpt)
    local cmd = string.format("%s -c '%s' -t --from '%s' --rcpt '%s' '%s'", SLOP_MILTER, conf,
        from or "casey@example.test", rcpt or "security@slop.test", path)
    local p = assert(io.popen(cmd, "r"))
    local out = {}
    for line in p:lines() do
        local k, v = line:match("^([%w-]+): (.*)$")
        if k then
            out[#out + 1] = { k, v }
        end
    end
    p:close()
    return out
end

function lib.preview_get(preview, key)
    local all = {}
    for _, kv in ipairs(preview) do
        if kv[1] == key then
            all[#all + 1] = kv[2]
        end
    end
    return all
end

-- The SMFIR_REPLYCODE text libmilter sends for the -t "smtp-reply:" lines
-- ("550 5.7.1 text"): one line as is, several joined by CRLF with "-"
-- after the codes on all but the last.
function lib.replycode_text(lines)
    if #lines == 1 then
        return lines[1]
    end
    local parts = {}
    for i, l in ipairs(lines) do
        local code, x, text = l:match("^(%d%d%d) (%S+) (.*)$")
        parts[i] = code .. (i < #lines and "-" or " ") .. x .. " " .. text
    end
    return table.concat(parts, "\r\n")
end

return lib
