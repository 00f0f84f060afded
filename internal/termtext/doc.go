// Package termtext makes text that todoflow did not write safe to print on
// a terminal.
//
// A terminal takes the bytes it is given both as text and as commands:
// escape sequences move the cursor and erase lines (CSI), set the clipboard
// (OSC 52), show a link whose target is not the text shown (OSC 8), retitle
// the window, and on some terminals make it type an answer back into its
// input. todoflow's clients print text that a model, a tool or a file wrote:
// a reply, a todo, a tool's result, a plan, an agent id, an error that
// quotes any of them. Whoever wrote that text (a model steered by a page it
// read, a file in the workspace) must not steer the terminal it shows on, so
// `starter` and `chat` pass it through Clean before they print it, and
// before they wrap it in their own colours, which stay theirs.
//
// # What Clean removes
//
//   - every sequence that ESC begins, in full: CSI (ESC [ … final byte),
//     OSC (ESC ] … BEL or ESC \), DCS, SOS, PM and APC (ESC P, X, ^, _ … ESC
//     \) and the short ESC sequences (ESC 7, ESC c, ESC ( B); removing only
//     the ESC would print the payload (a base64 clipboard, a URL) as text;
//   - the C1 controls U+0080–U+009F, which some terminals obey as the 8-bit
//     forms of the same sequences (U+009B is CSI, U+009D is OSC), with the
//     payloads of those that begin one;
//   - the C0 controls but newline and tab, DEL among them: a carriage return
//     or a backspace lets text overwrite what the line showed before it;
//   - the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069): they are no control to the terminal, but they reorder
//     what it shows, so that a file "report<U+202E>fdp.exe" reads as
//     "reportexe.pdf", and a command shown for the user to run can hide
//     what it does (CVE-2021-42574, "Trojan Source");
//   - bytes that are not UTF-8, which become U+FFFD: a terminal that is not
//     in UTF-8 mode reads a lone 0x9B as CSI.
//
// Everything else, accents, CJK and emoji included, is kept as it is. Text
// with nothing to remove, nearly all of it, is returned as it is, without
// a copy.
//
// A sequence that the text leaves unterminated (an OSC without its BEL) is
// removed up to the end of the text, as a terminal would have swallowed it;
// so clean a text before cutting it short, lest the cut leave half a
// sequence that swallows what is written after it.
package termtext
