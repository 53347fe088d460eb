use serde_json::json;

use super::*;

fn now() -> DateTime<FixedOffset> {
    DateTime::parse_from_rfc3339("2024-11-04T09:00:00+00:00").unwrap()
}

fn offered(schema: Value, text: &str) -> Offer {
    let schema = Schema::parse(&schema.to_string()).unwrap();
    offer(&schema, text, Some(now()))
}

const INVOICE: &str = "Customer Lee Wong, lee.wong@tailspin.io, owes 560 USD by 2024-12-24 for \
                       Tailspin Toys services. Call (415) 555-0123.";

fn invoice_schema() -> Value {
    json!({
        "type": "object",
        "required": ["customer", "email", "amount", "due_date"],
        "properties": {
            "customer": {"type": "string"},
            "email": {"type": "string", "format": "email"},
            "amount": {"type": "number"},
            "due_date": {"type": ["string", "null"], "format": "date"},
            "phone": {"type": "string", "x-detector": "phone"},
            "note": {"type": "string", "format": "email", "x-grounding": "none"},
            "status": {"type": "string", "enum": ["open", "paid"]}
        }
    })
}

#[test]
fn detector_fields_become_choices_and_the_rest_keeps_its_schema() {
    let offer = offered(invoice_schema(), INVOICE);
    let properties = &offer.schema["properties"];
    assert_eq!(properties["customer"], json!({"type": "string"}));
    assert_eq!(
        properties["email"],
        json!({"type": "string", "enum": ["lee.wong@tailspin.io"]})
    );
    // The year, month and day of the date and the phone's digits are not amounts.
    assert_eq!(
        properties["amount"],
        json!({"type": "number", "enum": [560]})
    );
    // Nullable, so null is a choice; "by 2024-12-24" is a range from today, whose start the
    // text does not write.
    assert_eq!(
        properties["due_date"],
        json!({"type": ["string", "null"], "enum": ["2024-12-24", null]})
    );
    // Optional (not required), so null is a choice too.
    assert_eq!(
        properties["phone"],
        json!({"type": ["string", "null"], "enum": ["(415) 555-0123", null]})
    );
    assert_eq!(properties["note"], invoice_schema()["properties"]["note"]);
    assert_eq!(
        properties["status"],
        invoice_schema()["properties"]["status"]
    );
    let detectors: Vec<Option<Detector>> = offer
        .fields
        .iter()
        .map(|field| field.map(|(detector, _)| detector))
        .collect();
    assert_eq!(
        detectors,
        [
            None,
            Some(Detector::Email),
            Some(Detector::Number),
            Some(Detector::Date),
            Some(Detector::Phone),
            None,
            None
        ]
    );
}

#[test]
fn an_absent_address_that_may_be_null_is_null() {
    let schema = json!({"type": "object", "required": ["email"],
        "properties": {"email": {"type": ["string", "null"], "format": "email"}}});
    let offer = offered(schema, "Maria Olsen joins next Friday.");
    assert_eq!(
        offer.schema["properties"]["email"],
        json!({"type": ["string", "null"], "enum": [null]})
    );
    assert_eq!(offer.fields[0], Some((Detector::Email, 0)));
}

#[test]
fn a_field_without_candidates_keeps_its_schema() {
    let offer = offered(invoice_schema(), "Customer Lee Wong owes nothing.");
    assert_eq!(
        offer.schema["properties"]["email"]["format"],
        json!("email")
    );
    assert_eq!(offer.fields[1], None);
    assert!(offer.found.is_empty());
}

#[test]
fn relative_dates_need_a_reference_time() {
    let schema = Schema::parse(
        &json!({"type": "object", "properties": {"day": {"type": "string", "format": "date"}}})
            .to_string(),
    )
    .unwrap();
    let text = "We meet next Friday, and the contract ends on 24 December 2024.";
    let with_now = offer(&schema, text, Some(now()));
    assert_eq!(
        with_now.schema["properties"]["day"]["enum"],
        json!(["2024-11-15", "2024-12-24", null])
    );
    let without = offer(&schema, text, None);
    assert_eq!(
        without.schema["properties"]["day"]["enum"],
        json!(["2024-12-24", null])
    );
}

#[test]
fn nested_objects_arrays_and_or_null_unions_are_walked() {
    let schema = json!({
        "type": "object",
        "required": ["contacts", "total"],
        "properties": {
            "contacts": {"type": "array", "items": {"type": "object", "properties": {
                "email": {"type": "string", "format": "email"}
            }}},
            "total": {"anyOf": [{"type": "integer", "maximum": 1000}, {"type": "null"}]}
        }
    });
    let offer = offered(
        schema,
        "Write to a@x.io or b@y.org; 2 units cost 1,250 or 900.",
    );
    assert_eq!(
        offer.schema["properties"]["contacts"]["items"]["properties"]["email"]["enum"],
        json!(["a@x.io", "b@y.org"])
    );
    // 1,250 breaks the maximum.
    assert_eq!(
        offer.schema["properties"]["total"],
        json!({"type": ["integer", "null"], "enum": [2, 900, null]})
    );
}

#[test]
fn too_many_values_are_not_offered() {
    let text: String = (1..=MAX_CANDIDATES + 1)
        .map(|n| format!("item {n}; "))
        .collect();
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let offer = offered(schema.clone(), &text);
    assert_eq!(offer.schema, schema);
}

#[test]
fn unknown_detectors_are_refused_when_the_schema_loads() {
    let error = Schema::parse(
        &json!({"type": "object", "properties": {"a": {"type": "string", "x-detector": "iban"}}})
            .to_string(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("phone, person"), "{error}");
}

/// A small deterministic generator, so the generated cases are the same every run.
struct Lcg(u64);

impl Lcg {
    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        options[(self.0 >> 33) as usize % options.len()]
    }
}

/// Generated texts from composed parts: each candidate offered is a value its detector found
/// in the text, with the span it was found at, and the value the text was built with is among
/// the candidates.
#[test]
fn generated_texts_offer_only_what_the_detectors_found() {
    let mut random = Lcg(33);
    let names = ["Lee Wong", "Priya Mensah", "Ana García", "Tomás Olsen"];
    let emails = [
        "lee.wong@tailspin.io",
        "p.mensah@globex.co.uk",
        "ana+bills@acme.com",
    ];
    let amounts = [
        ("560 USD", 560.0),
        ("$1,250.00", 1250.0),
        ("EUR 99.95", 99.95),
    ];
    let dates = [
        ("2024-12-24", "2024-12-24"),
        ("24 December 2024", "2024-12-24"),
        ("Jan 5, 2025", "2025-01-05"),
        ("next Friday", "2024-11-15"),
    ];
    let layouts = [
        "Customer {name}, {email}, owes {amount} by {date}.",
        "Invoice for {name}\nEmail: {email}\nTotal: {amount}\nDue: {date}\n",
        "| customer | email | total | due |\n|---|---|---|---|\n| {name} | {email} | {amount} | {date} |",
        "Dear {name},\nplease pay {amount} before {date}. Questions? Write to {email}.",
    ];
    let schema = Schema::parse(&invoice_schema().to_string()).unwrap();
    for _ in 0..200 {
        let name = random.pick(&names);
        let email = random.pick(&emails);
        let amount_index = random.pick(&["0", "1", "2"]).parse::<usize>().unwrap();
        let (amount_text, amount) = amounts[amount_index];
        let date_index = random.pick(&["0", "1", "2", "3"]).parse::<usize>().unwrap();
        let (date_text, iso) = dates[date_index];
        let text = random
            .pick(&layouts)
            .replace("{name}", name)
            .replace("{email}", email)
            .replace("{amount}", amount_text)
            .replace("{date}", date_text);
        let offer = offer(&schema, &text, Some(now()));
        for (index, field) in schema.fields.iter().enumerate() {
            let Some((detector, _)) = offer.fields[index] else {
                continue;
            };
            let found = find(&text, detector, now());
            let choices = offer.schema["properties"][&field.name]["enum"]
                .as_array()
                .unwrap();
            for choice in choices.iter().filter(|choice| !choice.is_null()) {
                if detector == Detector::Label {
                    // Text the document writes after the field's label, where it writes it.
                    assert!(
                        offer.found.iter().any(|(value, span)| {
                            Some(value.as_str()) == choice.as_str()
                                && text[span.byte_start..span.byte_end] == *value
                        }),
                        "{choice} in {text:?}"
                    );
                    continue;
                }
                let (_, span) = found
                    .iter()
                    .find(|(value, _)| value == choice)
                    .unwrap_or_else(|| panic!("{choice} was not found in {text:?}"));
                assert!(
                    offer.found.iter().any(|(_, offered)| offered == span),
                    "{choice} in {text:?}"
                );
            }
        }
        let choices = |name: &str| offer.schema["properties"][name]["enum"].clone();
        assert!(
            choices("email").as_array().unwrap().contains(&json!(email)),
            "{text:?}"
        );
        assert!(
            choices("amount")
                .as_array()
                .unwrap()
                .iter()
                .any(|choice| choice.as_f64() == Some(amount)),
            "{amount} in {text:?}: {}",
            choices("amount")
        );
        assert!(
            choices("due_date")
                .as_array()
                .is_some_and(|c| c.contains(&json!(iso))),
            "{iso} in {text:?}: {}",
            choices("due_date")
        );
    }
}

#[test]
fn the_yaml_form_names_detectors_by_type_or_key() {
    let schema = Schema::parse(
        "fields:\n  phone: {type: phone}\n  boss: {type: string, detector: person}\n  site: url\n",
    )
    .unwrap();
    let offer = offer(
        &schema,
        "Call Dr. Priya Mensah at (415) 555-0123 or see https://acme.example/team.",
        Some(now()),
    );
    let detectors: Vec<Option<Detector>> = offer
        .fields
        .iter()
        .map(|field| field.map(|(detector, _)| detector))
        .collect();
    assert_eq!(
        detectors,
        [
            Some(Detector::Phone),
            Some(Detector::Person),
            Some(Detector::Url)
        ]
    );
    assert!(
        Schema::parse("fields:\n  a: {type: string, detector: iban}\n").is_err(),
        "an unknown detector is refused"
    );
}

#[test]
fn a_table_column_header_names_its_cells() {
    let schema = json!({
        "type": "object",
        "required": ["date", "next_meeting", "location"],
        "properties": {
            "date": {"type": ["string", "null"], "format": "date"},
            "next_meeting": {"type": ["string", "null"], "format": "date"},
            "location": {"type": ["string", "null"]}
        }
    });
    let text = "| Meeting | Date | Location | Next meeting |\n|---|---|---|---|\n\
                | roadmap | 2025-03-10 | Boardroom 2 | 2025-04-07 |\n";
    let offer = offered(schema, text);
    let properties = &offer.schema["properties"];
    assert_eq!(properties["date"]["enum"], json!(["2025-03-10"]));
    assert_eq!(properties["next_meeting"]["enum"], json!(["2025-04-07"]));
    assert_eq!(properties["location"]["enum"], json!(["Boardroom 2"]));
}

#[test]
fn a_value_labelled_as_the_field_is_offered_without_null() {
    let schema = json!({
        "type": "object",
        "required": ["due_date", "location"],
        "properties": {
            "due_date": {"type": ["string", "null"], "format": "date"},
            "location": {"type": ["string", "null"]}
        }
    });
    let text = "Issued: 2024-11-01\nDue date: 2024-12-01\nLocation: Studio B, second floor\n";
    let offer = offered(schema, text);
    let properties = &offer.schema["properties"];
    assert_eq!(properties["due_date"]["enum"], json!(["2024-12-01"]));
    assert_eq!(properties["location"]["enum"], json!(["Studio B"]));
    assert_eq!(offer.fields[1], Some((Detector::Label, 1)));
}
