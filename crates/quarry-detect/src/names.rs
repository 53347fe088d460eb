//! Person names for the `name` target: the entity detector's people, each with an honorific
//! written before it (`Dr.`, `Mrs.`, `Prof.`) included, since a reader asking for names expects
//! `Dr. Jane Smith`, while entity spans follow the WikiGold convention without titles.

use crate::Detection;

/// Person names in `text`, in text order, as byte ranges.
pub fn find(text: &str) -> Vec<Detection> {
    crate::entity::people_with_honorifics(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        find(text).into_iter().map(|d| d.value).collect()
    }

    #[test]
    fn contract_example_keeps_honorific_in_name() {
        let text = "The report was prepared by Dr. Jane Smith and reviewed by Michael Johnson.";
        assert_eq!(names(text), ["Dr. Jane Smith", "Michael Johnson"]);
    }

    #[test]
    fn honorific_without_period_and_unknown_surname() {
        assert_eq!(
            names("Yesterday Mrs Okonkwo-Bell called."),
            ["Mrs Okonkwo-Bell"]
        );
    }

    #[test]
    fn places_and_organizations_are_not_names() {
        assert!(names("Microsoft opened an office in Paris.").is_empty());
    }
}
