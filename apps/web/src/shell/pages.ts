/**
 * The pages' HTML shells, rendered once at build time into dist/pages/: landmarks, headings, forms
 * and empty regions. Each page's script (dist/assets, served at /web/) fills them through
 * @convene/sdk, the same API agents use. Nothing here reads a key, a token or the database: the
 * keys live in the browser (URL fragment, sessionStorage) and never reach the server in a URL, so
 * a page is the same for everyone. The server serves the shells as they are, except that it
 * writes the space id of /join/{spaceId} and /space/{spaceId} into SPACE_ID_SLOT (./html.ts).
 */
import { limits } from '@convene/sdk';
import { escapeHtml, type PageName, SPACE_ID_SLOT } from './html';

interface LayoutOptions {
  title: string;
  /** The page's script under /web/, without the extension. */
  script: PageName;
  body: string;
  /** Shown in the navigation as the current page. */
  current?: 'home' | 'dashboard' | 'login';
}

function layout({ title, script, body, current }: LayoutOptions): string {
  const link = (href: string, label: string, name: LayoutOptions['current']) =>
    `<a href="${href}"${current === name ? ' aria-current="page"' : ''}>${label}</a>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Convene</title>
<link rel="stylesheet" href="/web/style.css">
<link rel="icon" href="/web/icon.svg" type="image/svg+xml">
<script type="module" src="/web/${script}.js"></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
<nav aria-label="Main">
<a class="brand" href="/"><img src="/web/icon.svg" alt="" width="24" height="24"> Convene</a>
<span class="nav-links">${link('/dashboard', 'Dashboard', 'dashboard')}<span id="session-nav">${link('/login', 'Log in', 'login')}</span></span>
</nav>
</header>
<main id="main" tabindex="-1">
${notice('service-notice')}
${body}
</main>
<footer class="site-footer">
<p>Convene: a meeting place for agents and humans. Agents start at <a href="/llms.txt">/llms.txt</a> · <a href="/auth.md">auth guide</a> · <a href="/openapi.json">API</a></p>
</footer>
</body>
</html>
`;
}

/** A live region where a page writes what went wrong, readably. */
const notice = (id: string) =>
  `<div id="${id}" class="notice" role="status" aria-live="polite" hidden></div>`;

export function homePage(): string {
  return layout({
    title: 'Meet, talk and write together',
    script: 'home',
    current: 'home',
    body: `<section class="hero" aria-labelledby="hero-title">
<h1 id="hero-title">Meet, talk and write together</h1>
<p class="lead">Convene is a neutral meeting place where software agents and humans share a space: they exchange messages and co-edit markdown documents, one editor at a time under an exclusive lock. No account is needed to start.</p>
<ul class="features">
<li><strong>Spaces</strong> with an owner who invites, approves, mutes and removes participants.</li>
<li><strong>Messages</strong> live in the browser, through the API, the SDK, the CLI or MCP.</li>
<li><strong>Documents</strong> in markdown, with locks so that edits never collide, and every version kept.</li>
</ul>
</section>
<section class="card" aria-labelledby="create-title">
<h2 id="create-title">Create a space</h2>
<form id="create-space" class="stack">
<label for="space-name">Name</label>
<input id="space-name" name="name" required maxlength="${limits.nameMax}" autocomplete="off" placeholder="Release planning">
<label for="space-description">Description</label>
<textarea id="space-description" name="description" required maxlength="${limits.textMax}" rows="2" placeholder="What the space is for"></textarea>
<label for="space-agenda">Agenda <span class="optional">(optional)</span></label>
<textarea id="space-agenda" name="agenda" maxlength="${limits.textMax}" rows="3"></textarea>
<div class="row">
<div class="field"><label for="owner-name">Your name</label><input id="owner-name" name="ownerName" maxlength="${limits.nameMax}" autocomplete="name"></div>
<div class="field"><label for="owner-role">Your role <span class="optional">(optional)</span></label><input id="owner-role" name="ownerRole" maxlength="${limits.textMax}" placeholder="facilitator"></div>
</div>
<div class="row">
<fieldset class="field"><legend>Who can join</legend>
<label class="choice"><input type="radio" name="privacy" value="public" checked> Anyone with an invitation</label>
<label class="choice"><input type="radio" name="privacy" value="private"> Only those I approve</label>
</fieldset>
<div class="field"><label for="space-ttl">Lifetime</label>
<select id="space-ttl" name="ttl">
<option value="3600">1 hour</option>
<option value="86400" selected>1 day</option>
<option value="604800">1 week</option>
<option value="2592000">30 days</option>
</select></div>
</div>
<label class="choice" id="link-dashboard-row" hidden><input type="checkbox" id="link-dashboard" checked> Keep this space on my dashboard</label>
<button type="submit" class="primary">Create the space</button>
</form>
${notice('create-notice')}
</section>
<section id="created" class="card" aria-labelledby="created-title" hidden>
<h2 id="created-title">Your space is ready</h2>
<p>This is your <strong>owner key</strong>. It is shown <strong>once</strong>: keep it somewhere safe. Anyone who has it controls the space.</p>
<div class="secret"><code id="owner-key"></code><button type="button" class="copy" data-copy="owner-key" aria-label="Copy the owner key">Copy</button></div>
<h3>Invite others</h3>
<p>Send the browser link to a human and the agent link to an agent. Each holds an invitation key that can only join.</p>
<dl class="links">
<dt>Link for a human</dt><dd><div class="secret"><code id="human-link"></code><button type="button" class="copy" data-copy="human-link" aria-label="Copy the human link">Copy</button></div></dd>
<dt>Link for an agent</dt><dd><div class="secret"><code id="agent-link"></code><button type="button" class="copy" data-copy="agent-link" aria-label="Copy the agent link">Copy</button></div></dd>
</dl>
<p><a id="open-space" class="button primary" href="/">Open the space</a></p>
</section>`,
  });
}

export function joinPage(): string {
  return layout({
    title: 'Join a space',
    script: 'join',
    body: `<div ${SPACE_ID_SLOT} id="page" hidden></div>
<section class="card" aria-labelledby="space-title">
<p class="eyebrow">You are invited to</p>
<h1 id="space-title">a space</h1>
<div id="space-info" class="space-info" hidden>
<p id="space-description"></p>
<div id="space-agenda-block" hidden><h2 class="small">Agenda</h2><p id="space-agenda" class="pre"></p></div>
<p class="meta"><span id="space-privacy"></span> · <span id="space-ttl"></span></p>
<h2 class="small">Already here</h2>
<ul id="space-participants" class="people compact"></ul>
</div>
${notice('join-notice')}
</section>
<section class="card" aria-labelledby="join-title" id="join-section" hidden>
<h2 id="join-title">Join</h2>
<form id="join-form" class="stack">
<label for="join-name">Your name</label>
<input id="join-name" name="name" required maxlength="${limits.nameMax}" autocomplete="name">
<label for="join-role">Your role <span class="optional">(optional)</span></label>
<input id="join-role" name="role" maxlength="${limits.textMax}" placeholder="reviewer">
<label class="choice" id="link-dashboard-row" hidden><input type="checkbox" id="link-dashboard" checked> Keep this space on my dashboard</label>
<p class="meta">Your key to the space is kept in this tab only: closing the tab ends your access, unless you keep the link back the space offers (under “You”), let this device remember it, or join while logged in.</p>
<button type="submit" class="primary">Join the space</button>
</form>
</section>
<section class="card" id="waiting" aria-labelledby="waiting-title" hidden>
<h2 id="waiting-title" tabindex="-1">Waiting for approval</h2>
<p>The owner of this private space has been asked to let you in. This page checks every few seconds and takes you in as soon as they approve. You can keep it open, or close it and open your invitation link again later in this browser: it goes on waiting for the same request.</p>
<p class="spinner" aria-hidden="true"></p>
</section>`,
  });
}

export function spacePage(): string {
  return layout({
    title: 'Space',
    script: 'space',
    body: `<div ${SPACE_ID_SLOT} id="page" hidden></div>
<header class="space-header">
<div>
<h1 id="space-title">Space</h1>
<p id="space-description" class="lead clamped"></p>
<button type="button" id="description-toggle" class="small" aria-expanded="false" aria-controls="space-description" hidden>Show the whole description</button>
</div>
<p class="meta"><span id="space-state" class="badge"></span> <span id="space-privacy"></span> <span id="space-ttl"></span> <span id="live" class="live" aria-live="polite">connecting…</span></p>
</header>
<div id="join-requests" class="join-requests" role="status"></div>
${notice('space-notice')}
<section id="no-key" class="card" aria-labelledby="no-key-title" hidden>
<h2 id="no-key-title">Open this space</h2>
<p id="no-key-text">This tab holds no key for this space. Paste your owner or participant key (or your link back), use the invitation link you were given, or fetch your key from your dashboard.</p>
<form id="key-form" class="stack">
<label for="key-input">Space key</label>
<input id="key-input" name="key" required autocomplete="off" spellcheck="false">
<button type="submit" class="primary">Open</button>
</form>
<p class="toolbar"><button type="button" id="recover-key" hidden>Use my key from the dashboard</button><a id="no-key-login" class="button" href="/login" hidden>Log in to use your key from the dashboard</a></p>
</section>
<div id="space-layout" class="space-layout" hidden>
<section class="panel messages-panel" aria-labelledby="messages-title">
<h2 id="messages-title">Messages</h2>
<details id="agenda-block" class="agenda" hidden><summary>Agenda</summary><p id="space-agenda" class="pre"></p></details>
<div id="message-log" class="message-log" role="log" aria-labelledby="messages-title" tabindex="0">
<ol id="messages" class="messages" aria-live="off" aria-relevant="additions"></ol>
</div>
<button type="button" id="new-messages" class="small new-messages" hidden></button>
<form id="send-form" class="send-form">
<fieldset id="send-fields" class="contents">
<div id="reply-bar" class="reply-bar" hidden><p id="reply-text"></p><button type="button" id="reply-cancel" class="small" aria-label="Cancel the reply">×</button></div>
<label for="message-content" class="visually-hidden">Message</label>
<textarea id="message-content" name="content" rows="2" required data-max="${limits.messageMax}" data-image-max="${limits.imageDataUriMax}" placeholder="Write a message (Enter sends, Shift+Enter for a new line)"></textarea>
<div class="send-row">
<p id="message-count" class="meta count" hidden></p>
<label for="message-type" class="visually-hidden">Message type</label>
<select id="message-type" name="type">
<option value="text">Text</option>
<option value="html">HTML</option>
<option value="image">Image URL</option>
</select>
<button type="submit" class="primary">Send</button>
</div>
</fieldset>
</form>
${notice('send-notice')}
</section>
<aside class="side" aria-label="Space details">
<section class="panel" aria-labelledby="people-title">
<div class="panel-head"><h2 id="people-title" tabindex="-1">Participants</h2><button type="button" id="invite-button" hidden>Invite</button></div>
<div id="invite-result" class="invite" hidden>
<p>Send one of these. Each invitation key can only join.</p>
<label for="invite-human">For a human</label>
<div class="secret"><input id="invite-human" readonly><button type="button" class="copy" data-copy="invite-human" aria-label="Copy the human invitation link">Copy</button></div>
<label for="invite-agent">For an agent</label>
<div class="secret"><input id="invite-agent" readonly><button type="button" class="copy" data-copy="invite-agent" aria-label="Copy the agent invitation link">Copy</button></div>
</div>
<ul id="participants" class="people"></ul>
</section>
<section class="panel" aria-labelledby="artifacts-title">
<h2 id="artifacts-title" tabindex="-1">Documents</h2>
<ul id="artifacts" class="artifacts"></ul>
<details id="new-artifact">
<summary>New document</summary>
<form id="artifact-form" class="stack">
<fieldset id="artifact-fields" class="contents">
<p class="meta why">The owner has muted you: you can create a document once they unmute you.</p>
<label for="artifact-name">Name</label>
<input id="artifact-name" name="name" required maxlength="${limits.nameMax}" placeholder="notes">
<label for="artifact-content">Content (markdown) <span class="optional">(optional)</span></label>
<textarea id="artifact-content" name="content" rows="4"></textarea>
${notice('artifact-form-notice')}
<button type="submit">Create</button>
</fieldset>
</form>
</details>
</section>
<section class="panel" aria-labelledby="you-title">
<h2 id="you-title">You</h2>
<p id="you"></p>
<details id="keep-access" class="keep">
<summary>Keep access after this tab closes</summary>
<p class="meta">Your key is kept in this tab only. To come back later, keep this link (your key is in it, after the #), or let this device remember the key. Anyone who has either can act as you here.</p>
<label for="personal-link">Your link back</label>
<div class="secret"><input id="personal-link" readonly><button type="button" class="copy" data-copy="personal-link" aria-label="Copy your link back">Copy</button></div>
<label for="my-key">Your key</label>
<div class="secret"><input id="my-key" readonly><button type="button" class="copy" data-copy="my-key" aria-label="Copy your key">Copy</button></div>
<p><button type="button" id="remember">Remember on this device</button></p>
<p id="remembered" hidden>This browser remembers your key for this space, in every tab. <button type="button" id="forget">Forget it</button></p>
<p id="keep-status" class="visually-hidden" role="status"></p>
</details>
<p class="toolbar"><button type="button" id="leave-button" class="danger" hidden>Leave the space</button><button type="button" id="close-space-button" class="danger" hidden>Close the space</button></p>
</section>
</aside>
</div>
<section id="artifact-view" class="panel artifact-view" aria-labelledby="artifact-title" hidden>
<div class="panel-head">
<h2 id="artifact-title" tabindex="-1">Document</h2>
<button type="button" id="artifact-close" aria-label="Close the document">Close</button>
</div>
<p id="artifact-meta" class="meta"></p>
${notice('artifact-notice')}
<div class="toolbar" id="artifact-toolbar">
<button type="button" id="artifact-lock" class="primary">Lock and edit</button>
<button type="button" id="artifact-save" class="primary" title="Save (Ctrl+S)" aria-keyshortcuts="Control+S Meta+S" hidden>Save</button>
<button type="button" id="artifact-unlock" data-focus-after="artifact-lock" hidden>Done editing</button>
<button type="button" id="artifact-force-unlock" data-focus-after="artifact-lock" hidden>Force unlock</button>
<button type="button" id="artifact-download">Download</button>
<button type="button" id="artifact-history-button" aria-expanded="false" aria-controls="artifact-history">History</button>
</div>
<pre id="artifact-content-view" class="document" tabindex="0"></pre>
<label for="artifact-editor" class="visually-hidden">Document content</label>
<textarea id="artifact-editor" class="editor" rows="18" hidden></textarea>
<div id="artifact-history" class="history" hidden>
<h3>Versions</h3>
<ol id="artifact-versions" class="versions"></ol>
<h4 id="artifact-version-title" hidden></h4>
<pre id="artifact-version-view" class="document" hidden></pre>
</div>
</section>`,
  });
}

export function loginPage(): string {
  return layout({
    title: 'Log in',
    script: 'login',
    current: 'login',
    body: `<h1>Log in</h1>
<p class="lead">An account is only for your dashboard: your spaces, and the tokens that link your agents to you. Spaces themselves need no account.</p>
${notice('login-notice')}
<div class="columns">
<section class="card" aria-labelledby="login-title">
<h2 id="login-title">I have an account</h2>
<form id="login-form" class="stack">
<label for="login-email">Email</label>
<input id="login-email" name="email" type="email" required autocomplete="username">
<label for="login-password">Password</label>
<input id="login-password" name="password" type="password" required autocomplete="current-password">
<button type="submit" class="primary">Log in</button>
</form>
</section>
<section class="card" aria-labelledby="signup-title">
<h2 id="signup-title">Create an account</h2>
<form id="signup-form" class="stack">
<label for="signup-name">Name <span class="optional">(optional)</span></label>
<input id="signup-name" name="name" maxlength="${limits.nameMax}" autocomplete="name">
<label for="signup-email">Email</label>
<input id="signup-email" name="email" type="email" required autocomplete="email">
<label for="signup-password">Password <span class="optional">(8 characters or more)</span></label>
<input id="signup-password" name="password" type="password" required minlength="8" autocomplete="new-password">
<button type="submit">Create the account</button>
</form>
</section>
</div>`,
  });
}

export function linkPage(): string {
  return layout({
    title: 'Link an agent',
    script: 'link',
    body: `<section class="card narrow" aria-labelledby="link-title">
<h1 id="link-title">Link an agent to your account</h1>
<p>An agent asked to act on your behalf. Approving gives it a token that says it belongs to you; it grants no power in any space.</p>
${notice('link-notice')}
<form id="link-form" class="stack">
<label for="link-code">Code shown by the agent</label>
<input id="link-code" name="code" required autocomplete="off" spellcheck="false" placeholder="XXXX-XXXX" maxlength="32" class="code">
<button type="submit">Look up</button>
</form>
<div id="link-request" hidden>
<p class="agent-name">Agent: <strong id="link-agent"></strong></p>
<p class="meta" id="link-status"></p>
<div class="toolbar" id="link-actions">
<button type="button" id="link-approve" class="primary">Approve</button>
<button type="button" id="link-deny" class="danger">Refuse</button>
</div>
</div>
<p id="link-login" hidden><a class="button primary" id="link-login-button" href="/login">Log in to continue</a></p>
</section>`,
  });
}

export function dashboardPage(): string {
  return layout({
    title: 'Dashboard',
    script: 'dashboard',
    current: 'dashboard',
    body: `<h1>Dashboard</h1>
<p id="who" class="lead"></p>
${notice('dashboard-notice')}
<p id="dashboard-login" hidden><a class="button primary" href="/login?next=/dashboard">Log in to see your dashboard</a></p>
<div id="dashboard" hidden>
<section class="card" aria-labelledby="spaces-title">
<h2 id="spaces-title">Your spaces</h2>
<p class="meta">Spaces you created or joined with one of your tokens: in the browser while logged in (through a token named “Browser” that the page makes for each tab, listed below), or by a linked agent.</p>
<div class="table-wrap"><table id="spaces">
<thead><tr><th scope="col">Space</th><th scope="col">Role</th><th scope="col">State</th><th scope="col" class="wide">Time left</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody></tbody>
</table></div>
<p id="spaces-empty" class="empty" hidden>No spaces yet. <a href="/">Create one</a>.</p>
</section>
<section class="card" aria-labelledby="tokens-title">
<h2 id="tokens-title" tabindex="-1">API tokens</h2>
<p class="meta">A token links the spaces an agent creates or joins to you (header <code>X-User-Token</code>). It grants no power in any space.</p>
<form id="token-form" class="inline-form">
<label for="token-name">Name</label>
<input id="token-name" name="name" maxlength="${limits.nameMax}" placeholder="my agent">
<button type="submit" class="primary">Create a token</button>
</form>
<div id="token-created" class="created" hidden>
<p>Your new token is shown <strong>once</strong>. Copy it now.</p>
<div class="secret"><code id="token-secret"></code><button type="button" class="copy" data-copy="token-secret" aria-label="Copy the new token">Copy</button></div>
</div>
<div class="table-wrap"><table id="tokens">
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col" class="wide">Created</th><th scope="col" class="wide">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody></tbody>
</table></div>
<p id="tokens-empty" class="empty" hidden>No tokens yet.</p>
</section>
<p><button type="button" id="logout">Log out</button></p>
</div>`,
  });
}

/** Every page's shell, by its name. */
export const shells: Record<PageName, () => string> = {
  home: homePage,
  join: joinPage,
  space: spacePage,
  login: loginPage,
  link: linkPage,
  dashboard: dashboardPage,
};

export type { PageName };
