#!/usr/bin/env python3
"""Writes the generated half of the local-model quality set (issue 33).

    python3 scripts/local_quality_cases.py --seed 33 \\
        --out crates/quarry-eval/data/local_quality/generated.jsonl

One JSON object per line, 8 cases for each of four kinds (invoice, contact, company, meeting):

    {"id": "invoice-g-01", "kind": "invoice", "origin": "generated",
     "now": "2024-11-04T09:00:00+00:00", "schema": {...}, "text": "...", "expected": {...}}

Every case is drawn from seeded templates with varied layouts: one-line sentences, labelled
"Key: value" lines, Markdown tables, short paragraphs, e-mails with greetings and sign-offs.
Dates are written as ISO, "24 December 2024", "Dec 24, 2024" or "24/12/2024" (the text then says
that its dates are day/month/year), and meeting dates also relatively ("tomorrow", "this
Friday", "on the 14th", "two weeks from today"), resolved against the case's `now`. About a
quarter of the cases leave one or two nullable fields out of the text (expected `null`).

The output depends only on --seed (Python's `random.Random`, stable across Python 3 versions),
so the committed file can be rebuilt byte for byte. Expected strings are copied from the text as
written; the script checks, before writing, that every expected string occurs in its text, that
every expected number is written there, and that every date is a valid YYYY-MM-DD.

SCHEMAS (the four JSON Schemas) is imported by anything that writes or checks cases of the set.
The schemas and the scoring rules are described in crates/quarry-eval/data/local_quality/README.md.
"""

import argparse
import datetime as dt
import json
import os
import random
import re
import sys
import unicodedata

# ---------------------------------------------------------------------------- schemas

SCHEMAS = {
    "invoice": {
        "type": "object",
        "required": ["customer", "email", "amount", "due_date", "invoice_number"],
        "properties": {
            "customer": {"type": "string"},
            "email": {"type": ["string", "null"], "format": "email"},
            "amount": {"type": "number"},
            "due_date": {"type": ["string", "null"], "format": "date"},
            "invoice_number": {"type": ["string", "null"]},
        },
    },
    "contact": {
        "type": "object",
        "required": ["name", "title", "company", "email", "phone", "website"],
        "properties": {
            "name": {"type": "string", "x-detector": "person",
                     "description": "The full name of the person the contact block is for."},
            "title": {"type": ["string", "null"], "description": "The person's job title."},
            "company": {"type": ["string", "null"], "x-detector": "organization",
                        "description": "The company the person works for."},
            "email": {"type": ["string", "null"], "format": "email"},
            "phone": {"type": ["string", "null"], "x-detector": "phone"},
            "website": {"type": ["string", "null"], "format": "uri"},
        },
    },
    "company": {
        "type": "object",
        "required": ["name", "founded", "headquarters", "ceo", "employees", "website"],
        "properties": {
            "name": {"type": "string", "description": "The company's name."},
            "founded": {"type": ["integer", "null"], "description": "The year the company was founded."},
            "headquarters": {"type": ["string", "null"], "description": "The city of the company's headquarters."},
            "ceo": {"type": ["string", "null"], "x-detector": "person",
                    "description": "The chief executive officer's full name."},
            "employees": {"type": ["integer", "null"], "description": "The number of employees."},
            "website": {"type": ["string", "null"], "format": "uri"},
        },
    },
    "meeting": {
        "type": "object",
        "required": ["date", "organizer", "next_meeting", "location", "budget"],
        "properties": {
            "date": {"type": "string", "format": "date", "description": "The date of the meeting."},
            "organizer": {"type": "string", "x-detector": "person",
                          "description": "The full name of the person who organised the meeting."},
            "next_meeting": {"type": ["string", "null"], "format": "date",
                             "description": "The date of the following meeting."},
            "location": {"type": ["string", "null"], "description": "Where the meeting takes place."},
            "budget": {"type": ["number", "null"], "description": "The budget amount discussed."},
        },
    },
}

KINDS = ["invoice", "contact", "company", "meeting"]
CASES_PER_KIND = 8
# Cases per kind that leave fields out: 2 of 8, a quarter of the set.
ABSENT_PER_KIND = 2

# ---------------------------------------------------------------------------- vocabulary

PEOPLE = [
    ("Lee", "Wong"), ("Priya", "Mensah"), ("Amara", "Okafor"), ("Sven", "Lindqvist"),
    ("Mariana", "Souza"), ("Kenji", "Watanabe"), ("Fatima", "Al-Sayed"), ("Olga", "Petrova"),
    ("Diego", "Hernández"), ("Aoife", "Byrne"), ("Mehmet", "Yılmaz"), ("Zanele", "Dlamini"),
    ("Arjun", "Mehta"), ("Siobhan", "O'Neill"), ("Léa", "Dubois"), ("Jakub", "Nowak"),
    ("Hana", "Kobayashi"), ("Kwame", "Asante"), ("Inés", "García"), ("Anika", "Schulz"),
    ("Rafael", "Costa"), ("Yusuf", "Demir"), ("Ingrid", "Haugen"), ("Malik", "Johnson"),
    ("Sofia", "Rossi"), ("Dmitri", "Volkov"), ("Aisha", "Bello"), ("Matteo", "Bianchi"),
    ("Camille", "Laurent"), ("Thabo", "Nkosi"), ("Mei", "Lin"), ("Tomasz", "Kowalczyk"),
]

# (name, legal suffix or "", domain, country code for phone numbers)
COMPANIES = [
    ("Tailspin Toys", "Ltd", "tailspin.io", "GB"),
    ("Northwind Traders", "Inc", "northwindtraders.com", "US"),
    ("Fabrikam", "GmbH", "fabrikam.de", "DE"),
    ("Contoso Pharmaceuticals", "Ltd", "contoso-pharma.co.uk", "GB"),
    ("Blue Yonder Airlines", "Inc", "blueyonder-air.com", "US"),
    ("Litware", "GmbH", "litware.de", "DE"),
    ("Adventure Works", "Ltd", "adventure-works.co.uk", "GB"),
    ("Wide World Importers", "Inc", "wideworldimporters.com", "US"),
    ("Proseware", "GmbH", "proseware.at", "AT"),
    ("Kestrel Robotics", "Inc", "kestrelrobotics.com", "US"),
    ("Alpenglow Analytics", "GmbH", "alpenglow-analytics.ch", "CH"),
    ("Harbourline Freight", "Ltd", "harbourline.co.nz", "NZ"),
    ("Sakura Data Systems", "Inc", "sakuradata.jp", "JP"),
    ("Meridian Textiles", "Ltd", "meridiantextiles.in", "IN"),
    ("Nordlicht Energie", "GmbH", "nordlicht-energie.de", "DE"),
    ("Lumen Health", "Inc", "lumenhealth.com", "US"),
    ("Graphite Labs", "", "graphitelabs.io", "US"),
    ("Coral Bay Logistics", "Ltd", "coralbay-logistics.com.au", "AU"),
]

CITIES = [
    "Munich", "Toronto", "Nairobi", "Osaka", "São Paulo", "Melbourne", "Dublin", "Bengaluru",
    "Lyon", "Kraków", "Austin", "Cape Town", "Rotterdam", "Seoul", "Zürich", "Auckland",
]

TITLES = [
    "Head of Procurement", "Senior Account Manager", "Chief Technology Officer",
    "Operations Director", "Product Designer", "Legal Counsel", "VP of Sales", "Data Engineer",
    "Customer Success Lead", "Finance Manager",
]

INDUSTRIES = [
    "logistics", "robotics", "analytics", "textiles", "energy", "health-tech", "software",
    "aviation",
]

LOCATIONS = [
    "Room 4.12", "Harbour Room", "Zoom", "Microsoft Teams", "Café Lindqvist", "Boardroom 2",
    "Lab 3", "Oak Room", "Studio B",
]

TOPICS = [
    "Q1 planning", "website relaunch", "supplier review", "hiring", "budget", "product roadmap",
    "security audit", "office move",
]

MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# Reference times the cases are written at (different weekdays and offsets; all in daytime so
# the local date is never in doubt).
NOWS = [
    "2024-11-04T09:00:00+00:00",  # Monday
    "2025-03-13T14:30:00+01:00",  # Thursday
    "2025-06-18T10:15:00-04:00",  # Wednesday
    "2024-12-03T11:00:00+09:00",  # Tuesday
    "2025-01-10T16:45:00+00:00",  # Friday
    "2025-09-22T08:30:00+02:00",  # Monday
]

DAY_FIRST_NOTE = "(dates are day/month/year)"

# ---------------------------------------------------------------------------- rendering


def ascii_fold(text):
    """Lower-case ASCII for e-mail local parts and domains: diacritics dropped."""
    text = text.replace("ı", "i").replace("'", "").replace(" ", "")
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return folded.lower()


def company_name(company):
    name, suffix, _, _ = company
    return f"{name} {suffix}".strip()


def date_iso(day):
    return day.isoformat()


def date_long(day):
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def date_us(day):
    return f"{MONTHS[day.month - 1][:3]} {day.day}, {day.year}"


def date_dmy(day):
    return f"{day.day:02d}/{day.month:02d}/{day.year}"


DATE_STYLES = {"iso": date_iso, "long": date_long, "us": date_us, "dmy": date_dmy}


def ordinal(n):
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def money(amount, style):
    """The amount as an invoice or a budget writes it; `amount` has at most two decimals."""
    whole = amount == int(amount)
    if style == "usd_sign":  # $1,250.00
        return f"${amount:,.2f}"
    if style == "code_after":  # 1250 EUR
        return f"{amount:.2f} EUR" if not whole else f"{int(amount)} EUR"
    if style == "code_before":  # USD 560
        return f"USD {amount:,.2f}" if not whole else f"USD {int(amount)}"
    if style == "euro_sign":  # €2,340.50
        return f"€{amount:,.2f}"
    if style == "pound_sign":  # £780
        return f"£{amount:,.2f}" if not whole else f"£{int(amount):,}"
    if style == "code_after_comma":  # 4,075.25 USD
        return f"{amount:,.2f} USD"
    raise ValueError(style)


MONEY_STYLES = ["usd_sign", "code_after", "code_before", "euro_sign", "pound_sign", "code_after_comma"]


def draw_amount(rng, cents):
    whole = rng.randint(120, 9800)
    return whole + rng.choice([0.25, 0.5, 0.75, 0.99]) if cents else float(whole)


def phone_number(rng, country):
    d = lambda n: "".join(str(rng.randint(0, 9)) for _ in range(n))
    if country == "US":
        area = rng.choice(["415", "212", "617", "312", "206"])
        line = f"01{rng.randint(0, 9)}{rng.randint(0, 9)}"
        return rng.choice([
            f"+1 ({area}) 555-{line}", f"({area}) 555-{line}", f"+1 {area} 555 {line}",
            f"{area}-555-{line}",
        ])
    if country == "GB":
        return rng.choice([f"+44 20 7946 0{d(3)}", f"020 7946 0{d(3)}"])
    if country == "DE":
        return rng.choice([f"+49 30 {d(4)} {d(4)}", f"+49 89 {d(6)}"])
    if country == "AT":
        return f"+43 1 {d(3)} {d(4)}"
    if country == "CH":
        return f"+41 44 {d(3)} {d(2)} {d(2)}"
    if country == "NZ":
        return f"+64 9 {d(3)} {d(4)}"
    if country == "JP":
        return f"+81 3-{d(4)}-{d(4)}"
    if country == "IN":
        return f"+91 80 {d(4)} {d(4)}"
    if country == "AU":
        return f"+61 2 {d(4)} {d(4)}"
    raise ValueError(country)


def website(rng, domain):
    return rng.choice([f"https://www.{domain}", f"https://{domain}", f"https://www.{domain}/"])


class Draw:
    """Picks without repeating until a pool is used up, so cases differ from one another."""

    def __init__(self, rng):
        self.rng = rng
        self.left = {}

    def pick(self, name, pool):
        left = self.left.get(name)
        if not left:
            left = list(pool)
            self.rng.shuffle(left)
            self.left[name] = left
        return left.pop()


def layouts_for(rng, count):
    """Layout indices for a kind's cases: each layout once, then random repeats, shuffled."""
    order = list(range(count))
    order += [rng.randrange(count) for _ in range(CASES_PER_KIND - count)]
    rng.shuffle(order)
    return order


# ---------------------------------------------------------------------------- invoices


def invoice_case(rng, draw, layout, absent, now):
    today = dt.date.fromisoformat(now[:10])
    vendor = draw.pick("company", COMPANIES)
    first, last = draw.pick("person", PEOPLE)
    # A person or a company is billed; e-mails and reminders address a person.
    if layout in (0, 4) or rng.random() < 0.5:
        customer = f"{first} {last}"
        email = f"{ascii_fold(first)}.{ascii_fold(last)}@{rng.choice(['gmail.com', 'outlook.com', 'proton.me', 'fastmail.com'])}"
    else:
        billed = draw.pick("customer_company", COMPANIES)
        while billed == vendor:
            billed = draw.pick("customer_company", COMPANIES)
        customer = company_name(billed)
        email = f"{rng.choice(['accounts', 'billing', 'ap', 'finance'])}@{billed[2]}"
    style = rng.choice(MONEY_STYLES)
    amount = draw_amount(rng, cents=style in ("usd_sign", "euro_sign", "code_after_comma") and rng.random() < 0.6)
    amount_text = money(amount, style)
    issued = today - dt.timedelta(days=rng.randint(0, 10))
    due = issued + dt.timedelta(days=rng.choice([14, 21, 30, 45]))
    date_style = rng.choice(list(DATE_STYLES))
    fmt = DATE_STYLES[date_style]
    number = rng.choice([
        f"INV-{issued.year}-{rng.randint(1, 9999):04d}", f"FAC-{rng.randint(10000, 99999)}",
        f"{vendor[0][0]}{vendor[0].split()[-1][0]}{rng.randint(100000, 999999)}",
    ])
    has = lambda field: field not in absent
    note = f" {DAY_FIRST_NOTE}" if date_style == "dmy" else ""
    v = company_name(vendor)

    if layout == 0:  # the one-line sentence
        parts = [f"Customer {customer}"]
        if has("email"):
            parts.append(email)
        text = ", ".join(parts) + f", owes {amount_text}"
        if has("due_date"):
            text += f" by {fmt(due)}"
        text += f" for {vendor[0]} services"
        if has("invoice_number"):
            text += f" (invoice {number})"
        text += "." + (f" All dates are day/month/year." if note else "")
    elif layout == 1:  # labelled lines
        lines = [f"INVOICE {number}" if has("invoice_number") else "INVOICE",
                 f"Issued by: {v}", f"Issue date: {fmt(issued)}{note}", f"Bill to: {customer}"]
        if has("email"):
            lines.append(f"Email: {email}")
        lines.append(f"Total due: {amount_text}")
        lines.append(f"Due date: {fmt(due)}" if has("due_date") else "Terms: payable on receipt")
        text = "\n".join(lines) + "\n"
    elif layout == 2:  # Markdown table, one row
        head, row = ["Customer"], [customer]
        if has("invoice_number"):
            head.insert(0, "Invoice")
            row.insert(0, number)
        if has("email"):
            head.append("Email")
            row.append(email)
        head += ["Amount", "Issued"]
        row += [amount_text, fmt(issued)]
        if has("due_date"):
            head.append("Due")
            row.append(fmt(due))
        text = (f"Open invoices of {v}{note}:\n\n| " + " | ".join(head) + " |\n|"
                + "---|" * len(head) + "\n| " + " | ".join(row) + " |\n")
    elif layout == 3:  # paragraph
        text = (f"Invoice {number} was issued" if has("invoice_number") else "An invoice was issued")
        text += f" on {fmt(issued)} to {customer}"
        text += f" ({email})." if has("email") else "."
        if has("due_date"):
            text += f" Please pay {amount_text} no later than {fmt(due)}."
        else:
            text += f" The total of {amount_text} is payable on receipt."
        text += f" Thank you for choosing {v}." + (" All dates are day/month/year." if note else "")
    elif layout == 4:  # reminder e-mail
        ref = f"invoice {number}" if has("invoice_number") else "our invoice"
        body = (f"This is a friendly reminder that {ref}, sent on {fmt(issued)}, is still open. "
                f"The amount of {amount_text} is due")
        body += f" on {fmt(due)}." if has("due_date") else " on receipt."
        if has("email"):
            body += f" Receipts will go to {email}."
        text = (f"Subject: Payment reminder\n\nDear {customer},\n\n{body}"
                + (f"\n\n(All dates in this message are day/month/year.)" if note else "")
                + f"\n\nKind regards,\nAccounts team, {v}\n")
    elif layout == 5:  # Markdown table, field per row
        rows = []
        if has("invoice_number"):
            rows.append(("Invoice no.", number))
        rows += [("Customer", customer)]
        if has("email"):
            rows.append(("Customer email", email))
        rows += [("Issue date", fmt(issued)), ("Amount", amount_text)]
        if has("due_date"):
            rows.append(("Due date", fmt(due)))
        text = (f"### {v}{note}\n\n| Field | Value |\n|---|---|\n"
                + "".join(f"| {k} | {val} |\n" for k, val in rows))
    else:
        raise ValueError(layout)

    expected = {
        "customer": customer,
        "email": email if has("email") else None,
        "amount": amount,
        "due_date": due.isoformat() if has("due_date") else None,
        "invoice_number": number if has("invoice_number") else None,
    }
    return text, expected


INVOICE_LAYOUTS = 6
INVOICE_NULLABLE = ["email", "due_date", "invoice_number"]

# ---------------------------------------------------------------------------- contacts


def contact_case(rng, draw, layout, absent, now):
    first, last = draw.pick("person", PEOPLE)
    name = f"{first} {last}"
    company = draw.pick("company", COMPANIES)
    title = draw.pick("title", TITLES)
    email = f"{ascii_fold(first)}.{ascii_fold(last)}@{company[2]}"
    phone = phone_number(rng, company[3])
    site = website(rng, company[2])
    org = company_name(company)
    has = lambda field: field not in absent
    other_first = first
    while other_first == first:
        other_first, _ = draw.pick("person", PEOPLE)

    if layout == 0:  # signature block after a short note
        lines = ["", "--", name]
        role = " | ".join(x for x, f in ((title, "title"), (org, "company")) if has(f))
        if role:
            lines.append(role)
        for value, field in ((phone, "phone"), (email, "email"), (site, "website")):
            if has(field):
                lines.append(value)
        text = "Thanks for the quick turnaround on the samples.\n" + "\n".join(lines) + "\n"
    elif layout == 1:  # labelled lines
        rows = [("Name", name, "name"), ("Title", title, "title"), ("Company", org, "company"),
                ("Phone", phone, "phone"), ("Email", email, "email"), ("Website", site, "website")]
        text = "".join(f"{k}: {v}\n" for k, v, f in rows if has(f))
    elif layout == 2:  # one line
        text = name
        if has("title") and has("company"):
            text += f", {title} at {org}"
        elif has("title"):
            text += f", {title}"
        elif has("company"):
            text += f" of {org}"
        reach = [v for v, f in ((email, "email"), (phone, "phone")) if has(f)]
        if reach:
            text += ". Reach me at " + " or ".join(reach)
        if has("website"):
            text += f"; more at {site}"
        text += "."
    elif layout == 3:  # Markdown table
        cols = [(k, v) for k, v, f in (("Name", name, "name"), ("Title", title, "title"),
                                       ("Company", org, "company"), ("Email", email, "email"),
                                       ("Phone", phone, "phone"), ("Website", site, "website"))
                if has(f)]
        text = ("New supplier contact:\n\n| " + " | ".join(k for k, _ in cols) + " |\n|"
                + "---|" * len(cols) + "\n| " + " | ".join(v for _, v in cols) + " |\n")
    elif layout == 4:  # e-mail with a greeting and a sign-off
        sign = [name]
        if has("title") and has("company"):
            sign.append(f"{title}, {org}")
        elif has("title"):
            sign.append(title)
        elif has("company"):
            sign.append(org)
        reach = [f"{label}: {v}" for label, v, f in (("T", phone, "phone"), ("E", email, "email")) if has(f)]
        if reach:
            sign.append(" · ".join(reach))
        if has("website"):
            sign.append(site)
        text = (f"Hi {other_first},\n\nGreat to meet you at the trade fair last week. I have attached "
                f"the price list we discussed; let me know if anything is unclear.\n\nBest regards,\n"
                + "\n".join(sign) + "\n")
    elif layout == 5:  # contact card with other labels
        rows = [("Contact", name, "name"), ("Role", title, "title"), ("Organisation", org, "company"),
                ("Tel.", phone, "phone"), ("Mail", email, "email"), ("Web", site, "website")]
        text = "CONTACT CARD\n" + "".join(f"{k:<14}{v}\n" for k, v, f in rows if has(f))
    else:
        raise ValueError(layout)

    expected = {
        "name": name,
        "title": title if has("title") else None,
        "company": org if has("company") else None,
        "email": email if has("email") else None,
        "phone": phone if has("phone") else None,
        "website": site if has("website") else None,
    }
    return text, expected


CONTACT_LAYOUTS = 6
CONTACT_NULLABLE = ["title", "company", "email", "phone", "website"]

# ---------------------------------------------------------------------------- companies


def company_case(rng, draw, layout, absent, now):
    company = draw.pick("profiled_company", COMPANIES)
    name = company_name(company)
    founded = rng.randint(1952, 2019)
    hq = draw.pick("city", CITIES)
    ceo_first, ceo_last = draw.pick("person", PEOPLE)
    ceo = f"{ceo_first} {ceo_last}"
    employees = rng.choice([rng.randint(12, 95), rng.randint(120, 990), rng.randint(1000, 48000)])
    emp_text = f"{employees:,}" if rng.random() < 0.6 else str(employees)
    site = website(rng, company[2])
    industry = rng.choice(INDUSTRIES)
    year_now = int(now[:4])
    revenue = rng.randint(3, 900)
    has = lambda field: field not in absent

    if layout == 0:  # profile paragraph
        clauses = []
        if has("founded"):
            clauses.append(f"founded in {founded}")
        if has("headquarters"):
            clauses.append(f"headquartered in {hq}")
        article = "an" if industry[0] in "aeiou" else "a"
        text = f"{name} is {article} {industry} company" + "".join(" " + " and ".join(clauses) for _ in clauses[:1]) + "."
        if has("ceo"):
            text += f" It is led by chief executive {ceo}."
        if has("employees"):
            text += f" The company employs {emp_text} people."
        text += f" Revenue reached ${revenue} million in {year_now - 1}."
        if has("website"):
            text += f" More information: {site}"
        text += "\n"
    elif layout == 1:  # fact sheet
        rows = [("Company", name, "name"), ("Founded", str(founded), "founded"),
                ("Headquarters", hq, "headquarters"), ("CEO", ceo, "ceo"),
                ("Employees", emp_text, "employees"), ("Website", site, "website")]
        text = (f"FACT SHEET ({year_now})\n" + "".join(f"{k}: {v}\n" for k, v, f in rows if has(f))
                + f"Sector: {industry}\n")
    elif layout == 2:  # Markdown table, field per row
        rows = [("Name", name, "name"), ("Year founded", str(founded), "founded"),
                ("HQ", hq, "headquarters"), ("Chief executive", ceo, "ceo"),
                ("Staff", emp_text, "employees"), ("Web", site, "website")]
        text = ("| Attribute | Value |\n|---|---|\n"
                + "".join(f"| {k} | {v} |\n" for k, v, f in rows if has(f)))
    elif layout == 3:  # press release with a dateline in another city
        dateline_city = draw.pick("city", [c for c in CITIES if c != hq])
        day = dt.date.fromisoformat(now[:10])
        text = f"{dateline_city.upper()}, {date_long(day)} — {name}"
        facts = []
        if has("headquarters"):
            facts.append(f"headquartered in {hq}")
        if has("founded"):
            facts.append(f"founded in {founded}")
        if facts:
            text += ", the " + industry + " firm " + " and ".join(facts) + ","
        text += f" today opened a new office in {dateline_city}."
        if has("ceo"):
            text += f' "This is a big step for us," said CEO {ceo}.'
        if has("employees"):
            text += f" The company now has {emp_text} employees"
            text += f" and plans to hire {rng.randint(10, 60)} more in {year_now + 1}."
        if has("website"):
            text += f"\n\nPress contact and images: {site}"
        text += "\n"
    elif layout == 4:  # one compact line
        parts = [name]
        if has("website"):
            parts[0] += f" ({site})"
        if has("founded"):
            parts.append(f"est. {founded}")
        if has("headquarters"):
            parts.append(f"HQ: {hq}")
        if has("ceo"):
            parts.append(f"CEO: {ceo}")
        if has("employees"):
            parts.append(f"{emp_text} employees")
        text = " — ".join(parts) + "\n"
    elif layout == 5:  # "about us" in the first person
        text = f"About {name}\n\n"
        if has("founded"):
            text += f"We were founded in {founded}. "
        if has("headquarters"):
            text += f"Our headquarters are in {hq}, "
            text += f"and our {emp_text} employees work across four continents. " if has("employees") else "and we work across four continents. "
        elif has("employees"):
            text += f"Our {emp_text} employees work across four continents. "
        if has("ceo"):
            text += f"Since {max(founded, year_now - 6) if has('founded') else year_now - 3} the team has been led by our CEO, {ceo}. "
        if has("website"):
            text += f"Visit us at {site}."
        text = text.rstrip() + "\n"
    else:
        raise ValueError(layout)

    expected = {
        "name": name,
        "founded": founded if has("founded") else None,
        "headquarters": hq if has("headquarters") else None,
        "ceo": ceo if has("ceo") else None,
        "employees": employees if has("employees") else None,
        "website": site if has("website") else None,
    }
    return text, expected


COMPANY_LAYOUTS = 6
COMPANY_NULLABLE = ["founded", "headquarters", "ceo", "employees", "website"]

# ---------------------------------------------------------------------------- meetings


def relative_dates(today, tense):
    """Every (phrase, date) a text written on `today` may use unambiguously for a meeting in the
    past (`tense` "past": on or before today) or in the future ("future": on or after today).

    "next WEEKDAY" only where the coming WEEKDAY is already in next week, and "last WEEKDAY"
    only where the latest WEEKDAY was in last week (both readings of next/last agree there);
    "this WEEKDAY" only for a day later this week; "on the Nth" only for a day later this month.
    """
    wd = today.weekday()
    days = lambda n: today + dt.timedelta(days=n)
    if tense == "past":
        out = [("today", today), ("yesterday", days(-1)), ("two days ago", days(-2)),
               ("three days ago", days(-3))]
        for target in range(wd, 5):  # the latest such weekday was in last week
            out.append((f"last {WEEKDAYS[target]}", days(target - wd - 7)))
        return out
    out = [("today", today), ("tomorrow", days(1)), ("the day after tomorrow", days(2)),
           ("a week from today", days(7)), ("two weeks from today", days(14))]
    for target in range(5):  # Monday to Friday
        if target > wd:
            out.append((f"this {WEEKDAYS[target]}", days(target - wd)))
        else:
            out.append((f"next {WEEKDAYS[target]}", days(7 - wd + target)))
    for day in range(today.day + 2, 29):
        out.append((f"on the {ordinal(day)}", today.replace(day=day)))
    return out


def meeting_dates(rng, today, tense):
    """(date phrase, date, next phrase, next date): relative or absolute, next after date.

    `tense`: "past" for notes and minutes (the meeting is on or before today), "any" else.
    """
    if tense == "any":
        tense = rng.choice(["past", "future"])
    if rng.random() < 0.65:
        rel = relative_dates(today, tense)
        if tense == "future":
            rel = [r for r in rel if r[1] <= today + dt.timedelta(days=7)]
        phrase, day = rng.choice(rel)
    else:
        offset = rng.randint(-6, 0) if tense == "past" else rng.randint(0, 6)
        day = today + dt.timedelta(days=offset)
        phrase = rng.choice(list(DATE_STYLES.values()))(day)
        if phrase == date_dmy(day):
            phrase += f" {DAY_FIRST_NOTE}"
    later = [r for r in relative_dates(today, "future") if r[1] > max(day, today)]
    if rng.random() < 0.5 and later:
        next_phrase, next_day = rng.choice(later)
    else:
        next_day = day + dt.timedelta(days=rng.choice([7, 14, 21, 28]))
        next_phrase = rng.choice([date_iso, date_long, date_us])(next_day)
    return phrase, day, next_phrase, next_day


# Meetings that notes and minutes report took place on or before the day they were written.
MEETING_TENSE = {0: "past", 1: "any", 2: "past", 3: "any", 4: "any", 5: "past"}


def meeting_case(rng, draw, layout, absent, now):
    today = dt.date.fromisoformat(now[:10])
    first, last = draw.pick("person", PEOPLE)
    organizer = f"{first} {last}"
    attendees = [f"{a} {b}" for a, b in (draw.pick("person", PEOPLE) for _ in range(2))]
    location = draw.pick("location", LOCATIONS)
    topic = draw.pick("topic", TOPICS)
    budget = float(rng.choice([2500, 4800, 7250, 12000, 15000, 30000, 950, 18500]))
    style = rng.choice(["usd_sign", "code_after", "code_before", "euro_sign", "pound_sign"])
    budget_text = money(budget, style).replace(".00", "")
    phrase, day, next_phrase, next_day = meeting_dates(rng, today, MEETING_TENSE[layout])
    deadline = today + dt.timedelta(days=rng.randint(20, 40))
    has = lambda field: field not in absent
    past = day < today
    at = f"on {location}" if location in ("Zoom", "Microsoft Teams") else f"in {location}"

    if layout == 0:  # labelled header and notes
        lines = [f"Meeting notes: {topic}", f"Date: {phrase}", f"Organizer: {organizer}",
                 f"Attendees: {', '.join(attendees)}"]
        if has("location"):
            lines.append(f"Location: {location}")
        if has("budget"):
            lines.append(f"Budget: {budget_text}")
        if has("next_meeting"):
            lines.append(f"Next meeting: {next_phrase}")
        lines += ["", "Notes:", f"- Draft due {date_iso(deadline)}.", "- Owners confirmed."]
        text = "\n".join(lines) + "\n"
    elif layout == 1:  # one sentence
        verb = "ran" if past or phrase in ("today",) else "will run"
        text = f"{organizer} {verb} the {topic} meeting {_when(phrase)}"
        if has("location"):
            text += f" {at}"
        if has("budget"):
            text += f"; the agreed budget is {budget_text}"
        text += "."
        if has("next_meeting"):
            text += f" The next meeting is {_when(next_phrase)}."
    elif layout == 2:  # bullet notes under a heading
        lines = [f"## {topic.capitalize()} sync, {phrase}", f"* Organised by {organizer}",
                 f"* Present: {', '.join(attendees)}"]
        if has("location"):
            lines.append(f"* Where: {location}")
        if has("budget"):
            lines.append(f"* Budget approved: {budget_text}")
        lines.append(f"* Follow-up meeting: {next_phrase}" if has("next_meeting") else "* No follow-up meeting planned yet")
        text = "\n".join(lines) + "\n"
    elif layout == 3:  # Markdown table, one row
        head = ["Meeting", "Date", "Organizer"]
        row = [topic, phrase, organizer]
        if has("location"):
            head.append("Location")
            row.append(location)
        if has("budget"):
            head.append("Budget")
            row.append(budget_text)
        if has("next_meeting"):
            head.append("Next meeting")
            row.append(next_phrase)
        text = ("| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n| "
                + " | ".join(row) + " |\n")
    elif layout == 4:  # invitation or recap e-mail from the organiser
        when = _when(phrase)
        if past:
            body = f"thanks for coming to the {topic} meeting {when}"
            body += f" {at}." if has("location") else "."
        else:
            body = f"I have booked {location} for our {topic} meeting {when}." if has("location") else f"our {topic} meeting is {when}."
        if has("budget"):
            body += f" We will work within the budget of {budget_text}."
        if has("next_meeting"):
            body += f" Let's meet again {_when(next_phrase)}."
        cc = f"Cc: {attendees[0]}\n\n"
        text = f"{cc}Hi all,\n\n{body[0].upper() + body[1:]}\n\nThanks,\n{organizer}\n"
    elif layout == 5:  # minutes paragraph
        text = f"Minutes of the {topic} meeting held {_when(phrase)}"
        if has("location"):
            text += f" {at}"
        text += (f". The meeting was organised by {organizer}; {attendees[0]} and {attendees[1]} "
                 f"took part.")
        if has("budget"):
            text += f" A budget of {budget_text} was approved."
        text += f" The final report is due {date_long(deadline)}."
        if has("next_meeting"):
            text += f" The group meets again {_when(next_phrase)}."
        text += "\n"
    else:
        raise ValueError(layout)

    expected = {
        "date": day.isoformat(),
        "organizer": organizer,
        "next_meeting": next_day.isoformat() if has("next_meeting") else None,
        "location": location if has("location") else None,
        "budget": budget if has("budget") else None,
    }
    return text, expected


def _when(phrase):
    """A date phrase as it follows a verb: "on 14 November 2024", "tomorrow", "on the 14th"."""
    if phrase.startswith(("on ", "today", "tomorrow", "yesterday", "the day after", "a week",
                          "two weeks", "this ", "next ", "last ")) or phrase.endswith(" ago"):
        return phrase
    return "on " + phrase


MEETING_LAYOUTS = 6
MEETING_NULLABLE = ["next_meeting", "location", "budget"]

# ---------------------------------------------------------------------------- the set

BUILDERS = {
    "invoice": (invoice_case, INVOICE_LAYOUTS, INVOICE_NULLABLE),
    "contact": (contact_case, CONTACT_LAYOUTS, CONTACT_NULLABLE),
    "company": (company_case, COMPANY_LAYOUTS, COMPANY_NULLABLE),
    "meeting": (meeting_case, MEETING_LAYOUTS, MEETING_NULLABLE),
}


def collapse(text):
    return " ".join(text.split())


def number_tokens(text):
    """Every number written in `text`, thousands separators removed, as floats."""
    out = set()
    for token in re.findall(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", text):
        out.add(float(token.replace(",", "")))
    return out


def check_case(case):
    """Raises ValueError when an expected value is not as the text writes it."""
    text = collapse(case["text"])
    schema = case["schema"]
    for field, value in case["expected"].items():
        if field not in schema["properties"]:
            raise ValueError(f"{case['id']}: {field} is not in the schema")
        spec = schema["properties"][field]
        types = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
        if value is None:
            if "null" not in types:
                raise ValueError(f"{case['id']}: {field} is null but not nullable")
            continue
        if spec.get("format") == "date":
            dt.date.fromisoformat(value)
        elif isinstance(value, str):
            if collapse(value) not in text:
                raise ValueError(f"{case['id']}: {field} {value!r} is not in the text")
        elif isinstance(value, (int, float)):
            if float(value) not in number_tokens(case["text"]):
                raise ValueError(f"{case['id']}: {field} {value!r} is not written in the text")
    if set(case["expected"]) != set(schema["properties"]):
        raise ValueError(f"{case['id']}: expected has not every property")


def build(seed):
    rng = random.Random(seed)
    draw = Draw(rng)
    cases = []
    for kind in KINDS:
        builder, layout_count, nullable = BUILDERS[kind]
        layouts = layouts_for(rng, layout_count)
        with_absent = set(rng.sample(range(CASES_PER_KIND), ABSENT_PER_KIND))
        for i in range(CASES_PER_KIND):
            absent = set()
            if i in with_absent:
                absent = set(rng.sample(nullable, rng.choice([1, 2])))
            now = NOWS[rng.randrange(len(NOWS))]
            text, expected = builder(rng, draw, layouts[i], absent, now)
            case = {
                "id": f"{kind}-g-{i + 1:02d}",
                "kind": kind,
                "origin": "generated",
                "now": now,
                "schema": SCHEMAS[kind],
                "text": text,
                "expected": expected,
            }
            # Whole amounts as JSON integers, as the text writes them.
            for field, value in expected.items():
                if isinstance(value, float) and value == int(value):
                    expected[field] = int(value)
            check_case(case)
            cases.append(case)
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=33, help="random seed (default: %(default)s)")
    parser.add_argument("--out", default="-", help="output JSONL file, - for stdout (default: %(default)s)")
    args = parser.parse_args()
    try:
        cases = build(args.seed)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    lines = "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in cases)
    if args.out == "-":
        sys.stdout.write(lines)
    else:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(lines)
        print(f"wrote {len(cases)} cases to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
