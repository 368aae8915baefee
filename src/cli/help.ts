/** The help of `pi-mcp` and of each command. */

const COMMON = `Options (before or after the arguments; -- ends them):
  --approve          also read the project file (.pi/mcp.json where you run pi-mcp), as if Pi trusted the project
  --timeout <s>      bound connecting and each request to <s> seconds for this run (over each server's "timeout")
  --json             machine-readable output on stdout; errors too: {"error":{"message","code"}}
  -h, --help         this help;  -v, --version  the version
Files: <agent dir>/mcp.json (PI_CODING_AGENT_DIR, default ~/.pi/agent) and, with --approve, ./.pi/mcp.json.
Through npm: npm run -s pi-mcp -- <command> … (reads the directory npm was run from).
Exit codes: 0 ok, 1 failed, 2 usage or configuration error (an unknown command, option, server, tool, prompt or
argument name, a missing argument, an entry or variable to fix), 3 sign-in needed (run pi-mcp login <server>),
130 interrupted.`;

const EDITS = `Edits keep the file's order, indentation and other entries; the result is checked as Pi loads it, or
nothing is written. env and header values are shown masked unless they are \${VAR} references; a \${VAR} is
stored as written and read from the environment at each session. A running Pi sees the change at its next
session or after /reload.
Options: --scope user|project (default user: <agent dir>/mcp.json; project: ./.pi/mcp.json), --json.
Exit codes: 0 ok, 2 refused (an existing name without --force, an entry that would not load, an unknown
server or tool name, a file Pi could not read): nothing was written.`;

export const HELP: Readonly<Record<string, string>> = {
	main: `pi-mcp: the MCP servers of pi-mcp from the shell

Usage: pi-mcp <command> [arguments] [options]

Commands:
  list                           servers with state, source, credentials and the files read
  tools <server> [query]         a server's tools (connects), optionally searched
  search <query>                 search the tools of every enabled server
  describe <server> <tool>       one tool's description and input schema
  call <server> <tool> ['<json>'] call a tool with JSON arguments; same output rules as the mcp tool
  prompt <server> <prompt> [name=value …]  print a prompt's messages
  read <server> <uri>            print a resource (binary content is saved with --out <dir>)
  login <server>                 sign in to an OAuth server: prints the link, waits, stores the result in the keyring
  logout <server>                delete the stored sign-in of a server
  doctor [--verbose]             Node, keyring, files, and a connection to every enabled server
  trust <server>                 review what changed since you approved a server's definitions
  add <name> -- <command> [args] add a stdio server (or add <name> --url <url> for an HTTP server)
  add-json <name> '<json>'       add a server from its JSON entry
  get <name> [--connect]         a server's entry as written, values masked (--connect: its instructions)
  remove <name>                  remove a server from the file that defines it
  enable <name> / disable <name> switch a server on or off in the file that defines it
  enable/disable <name> <tool>   show or hide one tool from the model (excludeTools)
  import <client> [file]         copy servers from claude-desktop, claude-code, cursor, vscode, codex or gemini
  secret set|list|remove|move    a server's \${secret:NAME} values in the OS keyring

Run pi-mcp <command> --help for details.
${COMMON}`,
	list: `Usage: pi-mcp list [--approve] [--json]\n\nEvery configured server with its state, source file and credential state, and the files read.\nNothing connects. Exit 2 when a file or an entry is invalid.\n${COMMON}`,
	tools: `Usage: pi-mcp tools [--approve] [--json] <server> [query]\n\nConnects to <server> and lists its tools with descriptions; with a query, the tools matching it\n(the same search as the mcp tool's "tools" action). --json prints the full definitions (schemas).\n${COMMON}`,
	search: `Usage: pi-mcp search [--approve] [--json] <query>\n\nSearches the tools of every enabled server (connecting those not connected, in parallel), best\nfirst, as the mcp tool's "tools" action does without a server. A server that fails is named.\n${COMMON}`,
	describe: `Usage: pi-mcp describe [--approve] [--json] <server> <tool>\n\nOne tool's description and input schema (--json: its whole definition).\n${COMMON}`,
	call: `Usage: pi-mcp call [--approve] [--json] [--out <dir>] <server> <tool> ['<json arguments>']\n\nCalls one tool. Arguments are one JSON object (default {}); whatever follows the tool's name is\nits arguments, never an option. Output follows the mcp tool's rules: escapes stripped, long text\ncut. The rest of a long text is saved to a file removed when the command exits, unless --out <dir>\nkeeps it there; images and other binary content are saved only with --out <dir>. Progress goes to stderr. Exit 1 when the\ntool reports an error.\n${COMMON}`,
	prompt: `Usage: pi-mcp prompt [--approve] [--json] [--out <dir>] <server> <prompt> [name=value …]\n\nGets a prompt with its arguments (one word each; quote a value with spaces) and prints its messages,\n"role: text" each; images and other binary parts are saved only with --out <dir>.\nAn unknown prompt or argument name, or a missing required argument, is named (exit 2). --json prints the messages as the server sent them.\n${COMMON}`,
	read: `Usage: pi-mcp read [--approve] [--json] [--out <dir>] <server> <uri>\n\nReads a resource (or a template's URI with its values filled in) and prints its text; binary\ncontent is saved only with --out <dir> (else it says it was not kept). --json prints the contents as sent.\n${COMMON}`,
	login: `Usage: pi-mcp login [--approve] <server>\n\nPrints an authorization link for an OAuth server and waits (up to 5 minutes) until the browser\nreturns to the loopback address, or until you paste the address the browser ended on (useful when\nthe browser runs on another machine). The sign-in is stored in the OS keyring.\n${COMMON}`,
	logout: `Usage: pi-mcp logout [--approve] [--json] <server>\n\nDeletes the stored sign-in of an OAuth server from the OS keyring.\n${COMMON}`,
	trust: `Usage: pi-mcp trust [--yes|--json|--reset] <server>\n\nConnects and shows each definition (tool, prompt, resource template, instructions) that changed since\nyou approved it, as a word diff ([-removed-] {+added+}); asks on a terminal. Withheld from the model until approved.\n  --yes    approve every change without asking\n  --json   print the changes; approve nothing\n  --reset  forget the server's pins: its next connection pins afresh\nExit codes: 0 nothing pending (or approved), 1 changes stay pending, 2 usage error.\n${COMMON}`,
	doctor: `Usage: pi-mcp doctor [--approve] [--json] [--verbose]\n\nChecks the Node version, that the OS keyring is reachable, that each file parses, and that each\nenabled server connects within its timeout (era, protocol, tool count, credential state, the first\nline of its instructions; --verbose: all of them). Progress goes to stderr. Exit 1 when something needs fixing.\n${COMMON}`,
	add: `Usage: pi-mcp add <name> [--scope user|project] [-e KEY=VALUE]… [--description <text>] [--force] -- <command> [args…]
       pi-mcp add <name> --url <url> [--header 'Name: value']… [--auth oauth [--client-id <id> --issuer <url>] [--oauth-scope <s>]
                                      | --auth bearer --bearer-env <VAR>] [--scope …] [--force]

Adds a server entry. An existing name is refused (exit 2) unless --force replaces it.
Examples:
  pi-mcp add files -- npx -y @modelcontextprotocol/server-filesystem ~/notes
  pi-mcp add gh -e 'GITHUB_TOKEN=\${GITHUB_TOKEN}' -- github-mcp-server stdio
  pi-mcp add linear --url https://mcp.linear.app/mcp --auth oauth
${EDITS}`,
	"add-json": `Usage: pi-mcp add-json [--scope user|project] [--force] <name> '<json entry>'\n\nAdds a server from its entry as mcp.json holds it, e.g.\n  pi-mcp add-json files '{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"]}'\n${EDITS}`,
	get: `Usage: pi-mcp get [--json] [--approve] [--connect] <name>\n\nThe server's entry as written in each file that defines it (secrets masked unless \${VAR}), and\nwhat loading makes of it (usable, disabled, or the error). Nothing starts: with --connect, an enabled\nserver is connected (as pi-mcp tools would) for the instructions it sends. The project file is read only with --approve.\n${EDITS}`,
	remove: `Usage: pi-mcp remove [--scope user|project] <name>\n\nRemoves the entry from the file that defines it (says which; --scope when both files do).\n${EDITS}`,
	enable: `Usage: pi-mcp enable [--scope user|project] <name> [<tool>]\n\nRemoves "enabled": false (or "disabled": true) from the entry in the file that defines the server. With --scope project for a server of\nthe user file, the project file gets an entry that switches it in this project only.\nWith a tool name after the server, shows that tool to the model again (excludeTools).\n${EDITS}`,
	disable: `Usage: pi-mcp disable [--scope user|project] <name> [<tool> [--approve] [--force]]\n\nSets "enabled": false in the file that defines the server (see enable for --scope project).\nWith a tool name after the server (disable <name> <tool>), hides only that tool from the model:\nits name goes into the entry's "excludeTools". The server is started first (the project file's only\nwith --approve) to check the name: one it does not list is refused (exit 2) with the close names;\n--force writes it without checking.\n${EDITS}`,
	secret: `Usage: pi-mcp secret set [--approve] <server> <NAME>      store a value (piped in, or typed without echo)
       pi-mcp secret list [--approve] [--json] <server>    each \${secret:NAME} the entry uses: stored or not
       pi-mcp secret remove [--approve] <server> <NAME>
       pi-mcp secret move [--scope user|project] <server>  literal secrets of env and headers into the keyring

A "\${secret:NAME}" in an env or headers value is read from the OS keyring when the server connects.
It is stored for the server's identity (its scope, name and what it runs): an entry of the same name
that runs another command gets nothing. No value is ever printed or written to a file.
${COMMON}`,
	import: `Usage: pi-mcp import [--scope user|project] [--force] [--move-secrets] [--json] <client> [file] [name…]

Copies server entries from another client's configuration: the file you name, or the client's
documented default path. Nothing else is read. Names already present are skipped unless --force.
Clients and their default files:
  claude-desktop  ~/.config/Claude/claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/…)
  claude-code     ./.mcp.json (project servers; mcpServers)
  cursor          ~/.cursor/mcp.json
  vscode          ./.vscode/mcp.json ("servers"; \${input:…} values are not imported)
  codex           ~/.codex/config.toml ([mcp_servers.<name>]; enabled_tools/disabled_tools kept)
  gemini          ~/.gemini/settings.json (mcpServers; httpUrl, includeTools/excludeTools kept)
--move-secrets takes literal secrets of each imported entry into the OS keyring (see pi-mcp secret move).
Give names after the file to import only those. claude-code and vscode files are a project's own:
they go to the project file unless --scope user (in the user file they would run in every project).
Exit 1 when some entries were imported and others skipped (each named); 2 when none was.
${EDITS}`,
};
