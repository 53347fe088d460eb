//! placeholder, being written
use crate::Detection;

pub fn find(_text: &str, _region: phonenumber::country::Id) -> Vec<Detection> {
    Vec::new()
}
