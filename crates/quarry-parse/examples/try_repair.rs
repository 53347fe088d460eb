fn main() {
    let text = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    for line in text.lines() {
        let (input, expected) = line.split_once(" => ").unwrap();
        let input: String = serde_json::from_str(input).unwrap();
        let got = quarry_parse::repair(&input, Default::default());
        let got = match got { Ok(r) => r.value.to_string(), Err(e) => format!("ERR {e}") };
        let exp: serde_json::Value = serde_json::from_str(expected).unwrap_or(serde_json::Value::String(expected.to_string()));
        let ok = got == exp.to_string() || (expected == "ERR" && got.starts_with("ERR"));
        if !ok { println!("{} {:?}\n   got {}\n   exp {}", if ok {"ok"} else {"XX"}, input, got, expected); }
    }
}
