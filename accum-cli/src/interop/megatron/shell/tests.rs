//! The shell reader on the forms launch scripts use.

use super::*;

fn texts(script: &Script, n: usize) -> Vec<String> {
    script.commands[n]
        .words
        .iter()
        .map(|w| w.text.clone())
        .collect()
}

#[test]
fn variables_quotes_and_arithmetic_expand() {
    let text = "MBS=1\nTP_SIZE=2  # comment\nGPUS=${GPUS:-8}\nNODES=2\nWORLD=$((GPUS*$NODES))\n\
                ARGS=\"--micro-batch-size $MBS --tensor-model-parallel-size ${TP_SIZE}\"\n\
                python pretrain_gpt.py $ARGS --world $WORLD \"--x y\"\n";
    let s = run(text, &[]);
    assert_eq!(s.var("GPUS").as_deref(), Some("8"));
    assert_eq!(s.var("WORLD").as_deref(), Some("16"));
    assert_eq!(
        texts(&s, 0),
        [
            "python",
            "pretrain_gpt.py",
            "--micro-batch-size",
            "1",
            "--tensor-model-parallel-size",
            "2",
            "--world",
            "16",
            "--x y"
        ]
    );
    // The value's range is where the script wrote it.
    let one = &s.commands[0].words[3];
    assert_eq!(&text[one.range()], "1");
    assert_eq!(one.range(), 4..5);
}

#[test]
fn arrays_continuations_and_heredocs() {
    let text = "A=(\n  --micro-batch-size 4 \\\n  --fp16 # half\n)\nA+=(--bf16)\ncat <<EOF\n--global-batch-size 9\nEOF\ntorchrun ${A[@]} \"${A[@]}\"\n";
    let s = run(text, &[]);
    let cmds: Vec<Vec<String>> = (0..s.commands.len()).map(|i| texts(&s, i)).collect();
    assert_eq!(cmds.len(), 2, "{cmds:?}");
    assert_eq!(cmds[0], ["cat"]);
    assert_eq!(
        cmds[1],
        [
            "torchrun",
            "--micro-batch-size",
            "4",
            "--fp16",
            "--bf16",
            "--micro-batch-size",
            "4",
            "--fp16",
            "--bf16"
        ]
    );
}

#[test]
fn branches_are_decided_or_marked_unknown() {
    let text = "PREC=bf16\nif [ \"$PREC\" = \"fp16\" ]; then\n  P=--fp16\nelse\n  P=--bf16\nfi\n\
                if [ -z \"$X\" ]; then X=3; fi\n\
                if [ $1 == a ]; then Y=1; else Y=2; fi\n\
                if [ $2 == a ]; then Z=1; else Z=1; fi\n";
    let s = run(text, &[]);
    assert_eq!(s.var("P").as_deref(), Some("--bf16"));
    assert_eq!(s.var("X").as_deref(), Some("3"));
    assert_eq!(s.var("Y"), None);
    assert!(matches!(s.env.get("Y"), Some(Value::Unknown(r)) if r.contains("branch")));
    assert_eq!(s.var("Z").as_deref(), Some("1"));
}

#[test]
fn case_arms_are_chosen_by_their_pattern() {
    let text = "MODEL_SCALE=\"800M\"\ncase \"${MODEL_SCALE}\" in\n  \"800M\")\n    TP=1\n    GBS=32\n    ;;\n  \"8B\") TP=4 ;;\n  *) TP=9;;\nesac\ncase $UNSET_X in a) Q=1;; b) Q=2;; esac\n";
    let s = run(text, &[]);
    assert_eq!(s.var("TP").as_deref(), Some("1"));
    assert_eq!(s.var("GBS").as_deref(), Some("32"));
    assert_eq!(s.var("Q"), None);
    let s = run("case x8B in *8B) Z=big;; esac\n", &[]);
    assert_eq!(s.var("Z").as_deref(), Some("big"));
}

#[test]
fn unknown_values_are_named() {
    let s = run(
        "torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $(hostname) x.py\n",
        &[],
    );
    let w = &s.commands[0].words;
    assert_eq!(w[2].unknown, ["`$GPUS_PER_NODE`"]);
    assert_eq!(w[4].unknown, ["the output of a command"]);
    let s = run(
        "torchrun --nproc_per_node $GPUS\n",
        &[("GPUS".into(), "4".into())],
    );
    assert_eq!(s.commands[0].words[2].text, "4");
}

#[test]
fn odd_text_never_panics() {
    for text in [
        "\\",
        "'",
        "\"abc",
        "$",
        "${",
        "${X:-",
        "$((",
        "$((1+",
        "$(",
        "`",
        "A=(",
        "if",
        "fi",
        "then else",
        "case x in a) A=1;; esac",
        "<<",
        "<<EOF\n",
        "é=1 $é",
        "$((1/0))",
        "$((99999999999999999999999999999999999999*99999999999999999))",
        "x=${y[",
        "${#x}",
    ] {
        let _ = run(text, &[]);
    }
}

#[test]
fn argument_loops_run_as_bash_runs_them() {
    let text = "Z=1\nwhile [[ $# -gt 0 ]]; do\n  case \"$1\" in\n    -z) Z=\"$2\"; shift 2 ;;\n    *) exit 1 ;;\n  esac\ndone\nuntil [ -n \"$Z\" ]; do Z=9; done\n";
    // No arguments: `$#` is 0, the loop does not run, Z keeps its value.
    assert_eq!(run(text, &[]).var("Z").as_deref(), Some("1"));
    // With arguments the loop runs once, as bash's first pass.
    let args = [
        ("1".to_owned(), "-z".to_owned()),
        ("2".to_owned(), "3".to_owned()),
    ];
    let s = run(text, &args);
    assert_eq!(s.var("Z").as_deref(), Some("3"));
    assert_eq!(s.var("#").as_deref(), Some("2"));
    assert_eq!(s.var("@").as_deref(), Some("-z 3"));
}

#[test]
fn bash_c_strings_are_scripts_located_in_the_outer_one() {
    let text = "MBS=4\nsrun -N 2 bash -c \"torchrun pretrain_gpt.py --micro-batch-size $MBS\" \nsh -c 'echo --global-batch-size $MBS'\n";
    let s = run(text, &[]);
    let cmds: Vec<Vec<String>> = (0..s.commands.len()).map(|i| texts(&s, i)).collect();
    assert_eq!(
        cmds,
        [
            vec!["torchrun", "pretrain_gpt.py", "--micro-batch-size", "4"],
            vec!["echo", "--global-batch-size", "4"],
        ]
    );
    // The value is where the outer script wrote it, in both kinds of string.
    assert_eq!(&text[s.commands[0].words[3].range()], "4");
    assert_eq!(s.commands[0].words[3].range(), 4..5);
    assert_eq!(s.commands[1].words[2].range(), 4..5);
    // Strings inside strings stop at the limit without losing the outer run.
    let deep = "bash -c 'bash -c \"bash -c x\"'\n";
    let s = run(deep, &[]);
    assert_eq!(texts(&s, 0), ["x"]);
}

#[test]
fn eval_runs_its_words_as_a_script() {
    let text =
        "MBS=2\nCMD=\"torchrun pretrain_gpt.py --micro-batch-size $MBS --x 'a b'\"\neval $CMD\n";
    let s = run(text, &[]);
    assert_eq!(
        texts(&s, 0),
        [
            "torchrun",
            "pretrain_gpt.py",
            "--micro-batch-size",
            "2",
            "--x",
            "a b"
        ]
    );
    assert_eq!(&text[s.commands[0].words[3].range()], "2");
}

#[test]
fn strings_run_by_a_shell_are_read_within_the_same_limits() {
    // The budget is shared: a string that doubles a variable reaches it,
    // reported at the command that runs the string.
    let text = format!("A=x\nbash -c '{}'\n", "A=$A$A; ".repeat(40));
    let (m, line) = limit(&text);
    assert!(m.contains("bytes"), "{m}");
    assert_eq!(line, 2);
    // Nesting inside the string is a limit too, not a stack overflow.
    let deep = format!(
        "X=1\nsh -c 'Y=$(({}1{}))'\n",
        "(".repeat(5_000),
        ")".repeat(5_000)
    );
    let (m, line) = limit(&deep);
    assert!(m.contains("`$(( … ))`"), "{m}");
    assert_eq!(line, 2);
}

/// The first limit a script reaches, with the line of the script it names.
fn limit(text: &str) -> (String, usize) {
    let s = run(text, &[]);
    let l = s.limit.expect("a limit");
    let line = text[..l.range.start].matches('\n').count() + 1;
    (l.message, line)
}

#[test]
fn arithmetic_that_refers_to_itself_is_a_cycle() {
    let (m, line) = limit("MBS=1\nX=X\nGBS=$((X))\n");
    assert!(m.contains("`X` → `X`"), "{m}");
    assert_eq!(line, 3);
    let (m, _) = limit("A=B\nB=A\necho $((A+1))\n");
    assert!(m.contains("`A` → `B` → `A`"), "{m}");
    let (m, _) = limit("GBS=GBS+1\npython x.py --global-batch-size $((GBS))\n");
    assert!(m.contains("`GBS` → `GBS`"), "{m}");
    // A chain without a cycle is fine.
    let s = run("A=B+1\nB=C*2\nC=3\nX=$((A))\n", &[]);
    assert_eq!(s.limit, None);
    assert_eq!(s.var("X").as_deref(), Some("7"));
}

#[test]
fn deep_nesting_is_a_limit_not_a_stack_overflow() {
    let n = 20_000;
    let parens = format!("X=$(({}1{}))\n", "(".repeat(n), ")".repeat(n));
    let (m, line) = limit(&format!("A=1\n{parens}"));
    assert!(m.contains("`$(( … ))`"), "{m}");
    assert_eq!(line, 2);
    let signs = format!("X=$(({}1))\n", "- ".repeat(n));
    assert!(limit(&signs).0.contains("64 levels"));
    let ifs = format!("{}X=1\n{}", "if true; then\n".repeat(n), "fi\n".repeat(n));
    let (m, line) = limit(&ifs);
    assert!(m.contains("`if`, loops and `case`"), "{m}");
    assert_eq!(line, 65);
    let loops = "while true; do\n".repeat(n);
    assert!(limit(&loops).0.contains("loops"));
    let defaults = format!("X={}1\n", "${X:-".repeat(50_000));
    let (m, line) = limit(&defaults);
    assert!(m.contains("`${…}`"), "{m}");
    assert_eq!(line, 1);
    // 64 levels are read.
    let ok = format!(
        "{}X=1\n{}",
        "if [ a ]; then\n".repeat(64),
        "fi\n".repeat(64)
    );
    let s = run(&ok, &[]);
    assert_eq!(s.limit, None);
    assert_eq!(s.var("X").as_deref(), Some("1"));
}

#[test]
fn expansions_that_double_reach_the_budget() {
    let text = format!("A=x\n{}", "A=$A$A\n".repeat(40));
    let (m, line) = limit(&text);
    assert!(m.contains("1048576 bytes"), "{m}");
    // Line k + 1 reads `A` twice, 2^k bytes: the sum passes 2^20 on line 21.
    assert_eq!(line, 21);
    let arrays = format!("ARR=(a b)\n{}", "ARR=(${ARR[@]} ${ARR[@]})\n".repeat(40));
    assert!(limit(&arrays).0.contains("bytes"));
    let quoted = format!("A=x\n{}", "A=\"$A$A$A\"\n".repeat(30));
    assert!(limit(&quoted).0.contains("bytes"));
    // Undecided branches copy the variables: those copies count too.
    let wide = format!(
        "{}\n{}",
        (0..2000)
            .map(|i| format!("V{i}={}", "v".repeat(400)))
            .collect::<Vec<_>>()
            .join("\n"),
        "if [ \"$(hostname)\" = a ]; then Y=1; fi\n".repeat(2000)
    );
    assert!(limit(&wide).0.contains("bytes"));
}

#[test]
fn a_script_of_many_words_stops_at_the_token_budget() {
    // Words, separators, arithmetic: each token counts, wherever it is.
    let words = format!("echo {}\n", "a ".repeat(limits::MAX_TOKENS + 1));
    let (m, line) = limit(&words);
    assert!(m.contains("more than 200000 words and separators"), "{m}");
    assert_eq!(line, 1);
    let arith = "Y=$((X+1))\n".repeat(limits::MAX_TOKENS / 2 + 1);
    let (m, line) = limit(&arith);
    assert!(m.contains("words and separators"), "{m}");
    assert_eq!(line, limits::MAX_TOKENS / 2 + 1);
    // Below the budget, a long script whose words are written out is read
    // whole: its expansions are its own size, within twice its size.
    let long = format!(
        "{}python pretrain_gpt.py --micro-batch-size 2\n",
        format!("echo {}\n", "word_".repeat(40)).repeat(10_000)
    );
    assert!(long.len() > limits::MAX_EXPANDED_BYTES);
    let s = run(&long, &[]);
    assert_eq!(s.limit, None);
    assert_eq!(s.commands.len(), 10_001);
}

#[test]
fn case_patterns_with_many_stars_match_in_linear_time() {
    let pattern = format!("{}b", "*a".repeat(400));
    let text = "a".repeat(1_000);
    assert!(!glob(&pattern, &text));
    assert!(glob("*8B", "x8B"));
    assert!(glob("a*b?d", "axxbcd"));
    assert!(!glob("a*b?d", "axxbd"));
    assert!(glob("*", ""));
}

#[test]
fn a_slice_keeps_exactly_the_unknowns_inside_it() {
    // "a" ?X "bc" ?Y ?Z "d": stand-ins at 1, 5 and 7.
    let mut f = Field::empty(0..0);
    f.text.push('a');
    f.offs.push(None);
    f.mark("X".into(), "?X");
    f.text.push_str("bc");
    f.offs.extend([None, None]);
    f.mark("Y".into(), "?Y");
    f.mark("Z".into(), "?Z");
    f.text.push('d');
    f.offs.push(None);
    let names = |s: &Field| (s.unknown.clone(), s.unknown_at.clone());
    assert_eq!(names(&f.slice(0, 1)), (vec![], vec![]));
    assert_eq!(names(&f.slice(1, 3)), (vec!["X".to_owned()], vec![0]));
    assert_eq!(
        names(&f.slice(3, 8)),
        (vec!["Y".to_owned(), "Z".to_owned()], vec![2, 4])
    );
    assert_eq!(names(&f.slice(5, 5)), (vec!["Y".to_owned()], vec![0]));
    assert_eq!(names(&f.slice(4, 4)), (vec![], vec![]));
    assert_eq!(names(&f.slice(9, 12)), (vec![], vec![]));
    // A field read from elsewhere has every stand-in at 0.
    let at = Field::at("v".into(), 0..1, vec!["A".into(), "B".into()]);
    assert_eq!(at.slice(0, 1).unknown, ["A", "B"]);
    assert!(at.slice(1, 1).unknown.is_empty());
}

#[test]
fn a_doubled_variable_keeps_each_default_once() {
    let text =
        "A=${X:-1}${Y:-2}\nA=$A$A\nA=$A$A\nA=$A$A\npython pretrain_gpt.py --micro-batch-size $A\n";
    let s = run(text, &[]);
    let word = s.commands[0]
        .words
        .iter()
        .find(|w| w.text.starts_with("12"))
        .expect("the expanded value");
    assert_eq!(word.defaults, ["X", "Y"]);
}
