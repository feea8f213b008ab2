-- ReplyRequires through the milter protocol: who is answered. Replies go
-- to a fake sendmail that records its recipient in WORK/sent. The reply
-- queue is first in, first out, so once a later sender's reply is seen, an
-- earlier sender with no line was never queued. lock-swap.eml reaches
-- ReplyThreshold 5 (slop-report.eml would, but Debian 12's miltertest dies with
-- "stack smashing detected" on its end-of-message, on main too).
--   1. {auth_authen} set at MAIL FROM (SMTP AUTH): answered;
--   2. no proof: not answered;
--   3. Authentication-Results with dmarc=pass from another authserv-id: not
--      answered;
--   4. the same from the MTA's own {j} (the default AuthservID): answered;
--   5. slop-milter -t on an unproved sender says so;
--   6. 31 junk Authentication-Results and a forged pass under {j} push the
--      MTA's own dmarc=fail to the 33rd field (issue 32): not answered;
--   7. a trusted dmarc=pass for attacker.eu.org, envelope victim.eu.org
--      (two customers of one public suffix): not answered;
--   8. a trusted dmarc=pass for a subdomain's sender: answered (so 6 and 7
--      were never queued);
--   9. slop-milter -t on case 6 names the cap as the reason;
--  10. PublicSuffixList: a list written here makes shared.test and
--      onmicrosoft.com public suffixes, so a pass for attacker.shared.test
--      does not answer victim.shared.test (-t), nor one for
--      attacker.onmicrosoft.com victim.onmicrosoft.com; without the key
--      the two shared.test names are one organisation and it would;
--  11. a PublicSuffixList that cannot be read stops -n with exit 78.
local lib = dofile(MSGS .. "/../lib.lua")
local conf = WORK .. "/reply-verify.conf"
local sent = WORK .. "/sent"
local fake = WORK .. "/fake-sendmail"
local f = assert(io.open(fake, "w"))
f:write("#!/bin/sh\ncat >/dev/null\nfor a in \"$@\"; do echo \"$a\"; done >>'" .. sent .. "'\n")
f:close()
os.execute("chmod 755 '" .. fake .. "'")
lib.write_conf(conf, {
    "Recipients security@slop.test",
    "ReplyTransport sendmail",
    "SendmailPath " .. fake,
    "TagThreshold 5",
    "ReplyThreshold 5",
})
os.remove(lib.sock)
mt.startfilter(SLOP_MILTER, "-f", "-c", conf)
local conn = mt.connect("unix:" .. lib.sock, 100, 0.1)
assert(conn ~= nil, "cannot connect")
-- The MTA's host name comes with the connection, as Postfix and Sendmail send it.
mt.macro(conn, SMFIC_CONNECT, "j", "mx.mt.test")
assert(mt.conninfo(conn, "client.example.test", "192.0.2.10") == nil)
assert(mt.getreply(conn) == SMFIR_CONTINUE)

local function sent_to(addr)
    local fh = io.open(sent, "r")
    if fh == nil then
        return false
    end
    local text = fh:read("a")
    fh:close()
    -- One argument per line; the recipient is the last one, without <>.
    return ("\n" .. text):find("\n" .. addr .. "\n", 1, true) ~= nil
end

local function wait_sent(addr)
    for _ = 1, 100 do
        if sent_to(addr) then
            return true
        end
        mt.sleep(0.1)
    end
    return false
end

local function report(n, from, opts)
    opts.qid = "RV" .. n
    opts.from = from
    opts.extra_headers = opts.extra_headers or {}
    local rc = lib.send(conn, MSGS .. "/lock-swap.eml", opts)
    lib.check("case " .. n .. ": accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
end

report(1, "riley1@example.test", { mail_macros = { "{auth_authen}", "riley1" } })
lib.check("1. authenticated sender answered", wait_sent("riley1@example.test"))
report(2, "riley2@example.test", {})
report(3, "riley3@example.test", { extra_headers = {
    { "Authentication-Results", "mx.evil.test; dmarc=pass header.from=example.test" } } })
report(4, "riley@example.test", { extra_headers = {
    { "Authentication-Results", "mx.mt.test; dmarc=pass (p=reject) header.from=example.test" } } })
lib.check("4. trusted dmarc=pass from {j} answered", wait_sent("riley@example.test"))
lib.check("2. unproved sender not answered", not sent_to("riley2@example.test"))
lib.check("3. dmarc=pass from another authserv-id not answered", not sent_to("riley3@example.test"))

-- 5. slop-milter -t says why it would not answer (it printed "would be
--    sent" with no text before).
local said = nil
for _, kv in ipairs(lib.preview(conf, MSGS .. "/lock-swap.eml", "riley5@example.test")) do
    if kv[1] == "reply-to" then
        said = kv[2]
    end
end
lib.check("5. -t: reply-to says unverified",
    said == "<riley5@example.test> (unverified: ReplyRequires not met)", said)

-- The test message with another From:, as a file beside the others.
local function with_from(from, extra_fields, name)
    local fh = assert(io.open(MSGS .. "/lock-swap.eml", "r"))
    local text = fh:read("a")
    fh:close()
    text = text:gsub("^From: [^\n]*\n", "From: " .. from .. "\n", 1)
    local path = WORK .. "/" .. name
    fh = assert(io.open(path, "w"))
    for _, h in ipairs(extra_fields) do
        fh:write(h[1] .. ": " .. h[2] .. "\n")
    end
    fh:write(text)
    fh:close()
    return path
end

local over_cap = {}
for i = 1, 31 do
    over_cap[#over_cap + 1] = { "Authentication-Results", "junk" .. i .. ".test; none" }
end
over_cap[#over_cap + 1] =
    { "Authentication-Results", "mx.mt.test; dmarc=pass header.from=example.test" }
over_cap[#over_cap + 1] =
    { "Authentication-Results", "mx.mt.test; dmarc=fail header.from=example.test" }
report(6, "riley6@example.test", { extra_headers = over_cap })
local eu = with_from("A <a@attacker.eu.org>", {}, "eu.eml")
local rc = lib.send(conn, eu, { qid = "RV7", from = "victim@victim.eu.org", extra_headers = {
    { "Authentication-Results", "mx.mt.test; dmarc=pass header.from=attacker.eu.org" } } })
lib.check("case 7: accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
report(8, "riley8@lists.example.test", { extra_headers = {
    { "Authentication-Results", "mx.mt.test; dmarc=pass header.from=example.test" } } })
lib.check("8. trusted dmarc=pass for a subdomain's sender answered",
    wait_sent("riley8@lists.example.test"))
lib.check("6. dmarc=fail pushed past the cap: not answered", not sent_to("riley6@example.test"))
lib.check("7. pass for attacker.eu.org does not answer victim.eu.org",
    not sent_to("victim@victim.eu.org"))

local conf9 = WORK .. "/reply-verify-9.conf"
lib.write_conf(conf9, { "Recipients security@slop.test", "ReplyTransport sendmail",
    "SendmailPath " .. fake, "TagThreshold 5", "ReplyThreshold 5", "AuthservID mx.mt.test" })
said = nil
for _, kv in ipairs(lib.preview(conf9, with_from("Casey <casey@example.test>", over_cap, "cap.eml"),
    "riley9@example.test")) do
    if kv[1] == "reply-to" then
        said = kv[2]
    end
end
lib.check("9. -t: reply-to names the cap",
    said == "<riley9@example.test> (unverified: ReplyRequires not met, "
        .. "Authentication-Results over-cap)", said)

local psl = WORK .. "/psl.dat"
fh = assert(io.open(psl, "w"))
fh:write("// a list for the test: no real list names .test\ncom\norg\ntest\n"
    .. "shared.test\nonmicrosoft.com\n")
fh:close()
local conf10 = WORK .. "/reply-verify-10.conf"
lib.write_conf(conf10, { "Recipients security@slop.test", "ReplyTransport sendmail",
    "SendmailPath " .. fake, "TagThreshold 5", "ReplyThreshold 5", "AuthservID mx.mt.test",
    "PublicSuffixList " .. psl })
local function preview_reply(conf_path, author_domain, env)
    local path = with_from("A <a@" .. author_domain .. ">", { { "Authentication-Results",
        "mx.mt.test; dmarc=pass header.from=" .. author_domain } }, author_domain .. ".eml")
    for _, kv in ipairs(lib.preview(conf_path, path, env)) do
        if kv[1] == "reply-to" then
            return kv[2]
        end
    end
end
for _, c in ipairs({
    { "shared.test customers do not align", conf10, "attacker.shared.test",
        "victim@victim.shared.test", "unverified: ReplyRequires not met" },
    { "onmicrosoft.com customers do not align", conf10, "attacker.onmicrosoft.com",
        "victim@victim.onmicrosoft.com", "unverified: ReplyRequires not met" },
    { "one customer's names align", conf10, "lists.shared.test", "pat@b.lists.shared.test",
        "would be sent" },
    { "without it shared.test is one organisation", conf9, "attacker.shared.test",
        "victim@victim.shared.test", "would be sent" },
}) do
    said = preview_reply(c[2], c[3], c[4])
    lib.check("10. PublicSuffixList: " .. c[1], said == "<" .. c[4] .. "> (" .. c[5] .. ")", said)
end

local conf11 = WORK .. "/reply-verify-11.conf"
lib.write_conf(conf11, { "PublicSuffixList " .. WORK .. "/no-such-list.dat" })
local _, _, code = os.execute(SLOP_MILTER .. " -n -c '" .. conf11 .. "' 2>/dev/null")
lib.check("11. unreadable PublicSuffixList: -n exits 78", code == 78, code)

mt.disconnect(conn)
lib.finish()
