//! The structure of a script: simple commands, `if`/`elif`/`else`,
//! loops and `case` arms.

use std::ops::Range;

use super::lex::{Part, Tok, Word};
use super::limits::{Limit, MAX_NESTING};

#[derive(Clone, Debug)]
pub(super) enum Node {
    Cmd(Vec<Tok>),
    If(Vec<(Option<Vec<Tok>>, Vec<Node>)>),
    /// `while`/`until` (with the condition and whether it is `until`),
    /// `for` and `select` (no condition): the body.
    Loop(Option<(Vec<Tok>, bool)>, Vec<Node>),
    /// `case WORD in PATTERN) … ;; esac`.
    Case(Option<Word>, Vec<(Vec<Word>, Vec<Node>)>),
}

/// Splits tokens into simple commands at separators, keeping `( … )`
/// groups (array values) inside their command.
pub(super) fn simple_commands(tokens: Vec<Tok>) -> Vec<Vec<Tok>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut depth = 0usize;
    for t in tokens {
        match t {
            Tok::Sep if depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            Tok::Sep => {}
            Tok::CaseEnd => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push(vec![Tok::CaseEnd]);
            }
            Tok::Open => {
                depth += 1;
                cur.push(t);
            }
            Tok::Close => {
                depth = depth.saturating_sub(1);
                cur.push(t);
            }
            t => cur.push(t),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

pub(super) fn keyword(cmd: &[Tok]) -> Option<&str> {
    match cmd.first() {
        Some(Tok::Word(w)) => match w.parts.as_slice() {
            [
                Part::Lit {
                    text,
                    quoted: false,
                    ..
                },
            ] => Some(text.as_str()),
            _ => None,
        },
        _ => None,
    }
}

/// The deepest nesting of compound commands (`if`, loops, `case`) in a
/// list of simple commands, as `parse_block` would recurse into it: the first
/// command that opens a level past [`MAX_NESTING`] is the limit.
pub(super) fn compound_nesting(
    cmds: &[Vec<Tok>],
    range: impl Fn(&[Tok]) -> Range<usize>,
) -> Result<(), Limit> {
    let mut depth = 0usize;
    for cmd in cmds {
        match keyword(cmd) {
            Some("if" | "for" | "while" | "until" | "select" | "case") => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(Limit::nesting("`if`, loops and `case`", range(cmd)));
                }
            }
            Some("fi" | "done" | "esac") => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Parses commands into a tree until one of `stop` opens a command.
pub(super) fn parse_block(
    cmds: &mut std::iter::Peekable<std::vec::IntoIter<Vec<Tok>>>,
    stop: &[&str],
) -> Vec<Node> {
    let mut out = Vec::new();
    while let Some(cmd) = cmds.peek() {
        let kw = keyword(cmd).map(str::to_owned);
        if let Some(k) = &kw
            && stop.contains(&k.as_str())
        {
            return out;
        }
        let mut cmd = cmds.next().expect("peeked");
        match kw.as_deref() {
            Some("if") => {
                cmd.remove(0);
                let mut branches = Vec::new();
                let mut cond = Some(cmd);
                loop {
                    // The condition may run on to `then` on its own line.
                    let body = parse_block(cmds, &["then", "elif", "else", "fi"]);
                    if let (Some(c), false) = (cond.as_mut(), body.is_empty()) {
                        // Commands between `if` and `then` are part of the condition.
                        for node in body {
                            if let Node::Cmd(t) = node {
                                c.extend(t);
                            }
                        }
                    }
                    if cmds.peek().and_then(|c| keyword(c)) == Some("then") {
                        let mut then = cmds.next().expect("peeked");
                        then.remove(0);
                        let mut body = Vec::new();
                        if !then.is_empty() {
                            body.push(Node::Cmd(then));
                        }
                        body.extend(parse_block(cmds, &["elif", "else", "fi"]));
                        branches.push((cond.take(), body));
                    }
                    match cmds
                        .peek()
                        .and_then(|c| keyword(c))
                        .map(str::to_owned)
                        .as_deref()
                    {
                        Some("elif") => {
                            let mut c = cmds.next().expect("peeked");
                            c.remove(0);
                            cond = Some(c);
                        }
                        Some("else") => {
                            let mut e = cmds.next().expect("peeked");
                            e.remove(0);
                            let mut body = Vec::new();
                            if !e.is_empty() {
                                body.push(Node::Cmd(e));
                            }
                            body.extend(parse_block(cmds, &["fi"]));
                            branches.push((None, body));
                            cmds.next();
                            break;
                        }
                        Some("fi") => {
                            cmds.next();
                            break;
                        }
                        _ => break,
                    }
                }
                out.push(Node::If(branches));
            }
            Some(kw @ ("for" | "while" | "until" | "select")) => {
                // The condition of `while`/`until` runs on to `do`, on its
                // own line or after `;`.
                let mut cond: Vec<Tok> = cmd[1..].to_vec();
                for node in parse_block(cmds, &["do"]) {
                    if let Node::Cmd(t) = node {
                        cond.extend(t);
                    }
                }
                let cond = matches!(kw, "while" | "until").then(|| (cond, kw == "until"));
                let mut body = Vec::new();
                if let Some(mut d) = cmds.next() {
                    d.remove(0);
                    if !d.is_empty() {
                        body.push(Node::Cmd(d));
                    }
                }
                body.extend(parse_block(cmds, &["done"]));
                cmds.next();
                out.push(Node::Loop(cond, body));
            }
            Some("case") => {
                let subject = match cmd.get(1) {
                    Some(Tok::Word(w)) => Some(w.clone()),
                    _ => None,
                };
                let mut arms: Vec<(Vec<Word>, Vec<Vec<Tok>>)> = Vec::new();
                // An arm may start on the `case … in` line itself.
                let mut pending: Option<Vec<Tok>> = cmd
                    .iter()
                    .position(|t| matches!(t, Tok::Word(w) if literal(w).as_deref() == Some("in")))
                    .map(|k| cmd[k + 1..].to_vec())
                    .filter(|rest| !rest.is_empty());
                loop {
                    let next = match pending.take() {
                        Some(p) => p,
                        None => {
                            let Some(peeked) = cmds.peek() else { break };
                            if keyword(peeked) == Some("esac") {
                                cmds.next();
                                break;
                            }
                            cmds.next().expect("peeked")
                        }
                    };
                    if next == [Tok::CaseEnd] {
                        continue;
                    }
                    let close = next.iter().position(|t| *t == Tok::Close);
                    let is_pattern = close.is_some_and(|k| {
                        k > 0
                            && next[..k]
                                .iter()
                                .all(|t| matches!(t, Tok::Word(_) | Tok::Open))
                    });
                    match (is_pattern, close) {
                        (true, Some(k)) => {
                            let patterns = next[..k]
                                .iter()
                                .filter_map(|t| match t {
                                    Tok::Word(w) => Some(w.clone()),
                                    _ => None,
                                })
                                .collect();
                            let rest: Vec<Tok> = next[k + 1..].to_vec();
                            let body = if rest.is_empty() {
                                Vec::new()
                            } else {
                                vec![rest]
                            };
                            arms.push((patterns, body));
                        }
                        _ => {
                            if let Some(arm) = arms.last_mut() {
                                arm.1.push(next);
                            }
                        }
                    }
                }
                let arms = arms
                    .into_iter()
                    .map(|(p, body)| {
                        let mut it = body.into_iter().peekable();
                        (p, parse_block(&mut it, &[]))
                    })
                    .collect();
                out.push(Node::Case(subject, arms));
            }
            Some("then" | "do" | "else" | "elif" | "fi" | "done" | "esac" | "{" | "}") => {
                // A stray keyword (unbalanced script): the rest of its command runs.
                cmd.remove(0);
                if !cmd.is_empty() {
                    out.push(Node::Cmd(cmd));
                }
            }
            _ => out.push(Node::Cmd(cmd)),
        }
    }
    out
}

/// The literal text of a word with no quotes or expansions.
pub(super) fn literal(w: &Word) -> Option<String> {
    match w.parts.as_slice() {
        [
            Part::Lit {
                text,
                quoted: false,
                ..
            },
        ] => Some(text.clone()),
        _ => None,
    }
}
