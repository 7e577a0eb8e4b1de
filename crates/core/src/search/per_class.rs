//! One value per traffic class, in a fixed-size container: job results and curve points
//! stay `Copy` (workers pass them by value), and the JSON is a plain list.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::plan::classes::MAX_CLASSES;

/// Up to [`MAX_CLASSES`] values, one per class in the plan's order (none for a plan of
/// one class).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerClass<T: Copy + Default> {
    len: u8,
    items: [T; MAX_CLASSES],
}

impl<T: Copy + Default> Default for PerClass<T> {
    fn default() -> Self {
        PerClass {
            len: 0,
            items: [T::default(); MAX_CLASSES],
        }
    }
}

impl<T: Copy + Default> PerClass<T> {
    /// The first [`MAX_CLASSES`] values of `values`.
    pub fn of(values: impl IntoIterator<Item = T>) -> PerClass<T> {
        let mut p = PerClass::default();
        for v in values.into_iter().take(MAX_CLASSES) {
            p.items[p.len as usize] = v;
            p.len += 1;
        }
        p
    }

    /// The values, in class order.
    pub fn as_slice(&self) -> &[T] {
        &self.items[..self.len as usize]
    }

    /// Whether it holds no value (a plan of one class).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        self.len as usize
    }
}

impl<T: Copy + Default + Serialize> Serialize for PerClass<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

impl<'de, T: Copy + Default + Deserialize<'de>> Deserialize<'de> for PerClass<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v: Vec<T> = Vec::deserialize(d)?;
        if v.len() > MAX_CLASSES {
            return Err(serde::de::Error::custom(format!(
                "at most {MAX_CLASSES} classes, got {}",
                v.len()
            )));
        }
        Ok(PerClass::of(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_in_json_and_refused_past_the_most_classes() {
        let p = PerClass::of([0.5, 0.25]);
        assert_eq!(serde_json::to_string(&p).expect("json"), "[0.5,0.25]");
        let back: PerClass<f64> = serde_json::from_str("[0.5,0.25]").expect("reads");
        assert_eq!(back, p);
        assert_eq!(back.as_slice(), &[0.5, 0.25]);
        let nine = serde_json::to_string(&[1.0; MAX_CLASSES + 1]).expect("json");
        assert!(serde_json::from_str::<PerClass<f64>>(&nine).is_err());
        assert!(PerClass::<f64>::default().is_empty());
    }
}
