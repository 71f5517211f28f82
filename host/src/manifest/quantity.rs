//! Kubernetes resource quantities (`500m`, `1Gi`, `1e3`, `0.5`), exactly as
//! `k8s.io/apimachinery/pkg/api/resource` reads them.

use std::fmt;

/// Why a quantity string is not a valid Kubernetes quantity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityError {
    text: String,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid quantity {:?}: expected a number with an optional suffix \
             (n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent like e3)",
            self.text
        )
    }
}

impl std::error::Error for QuantityError {}

/// A parsed quantity, kept exactly as a fraction `mantissa × 10^exp10 × 2^exp2`
/// so that rounding happens once, when a unit is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    negative: bool,
    /// Decimal digits of the number with the point removed.
    mantissa: u128,
    /// Power of ten applied to `mantissa` (fraction digits make it negative).
    exp10: i32,
    /// Power of two from binary suffixes (`Ki` = 10, ...).
    exp2: u32,
}

impl Quantity {
    /// Parses a quantity string.
    ///
    /// ```
    /// use wasched::manifest::quantity::Quantity;
    ///
    /// assert_eq!(Quantity::parse("500m").unwrap().ceil_milli(), 500);
    /// assert_eq!(Quantity::parse("1Gi").unwrap().ceil_value(), 1 << 30);
    /// assert!(Quantity::parse("5 cores").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        let err = || QuantityError {
            text: text.to_string(),
        };
        let s = text.trim();
        let (negative, s) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let number_end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let (number, suffix) = s.split_at(number_end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
            return Err(err());
        }
        let mut mantissa: u128 = 0;
        for digit in whole.bytes().chain(fraction.bytes()) {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(u128::from(digit - b'0')))
                .ok_or_else(err)?;
        }
        let mut exp10 = -i32::try_from(fraction.len()).map_err(|_| err())?;
        let mut exp2 = 0;
        match suffix {
            "" => {}
            "n" => exp10 -= 9,
            "u" => exp10 -= 6,
            "m" => exp10 -= 3,
            "k" => exp10 += 3,
            "M" => exp10 += 6,
            "G" => exp10 += 9,
            "T" => exp10 += 12,
            "P" => exp10 += 15,
            "E" => exp10 += 18,
            "Ki" => exp2 = 10,
            "Mi" => exp2 = 20,
            "Gi" => exp2 = 30,
            "Ti" => exp2 = 40,
            "Pi" => exp2 = 50,
            "Ei" => exp2 = 60,
            exponent if exponent.starts_with(['e', 'E']) => {
                let value: i32 = exponent[1..].parse().map_err(|_| err())?;
                exp10 = exp10.checked_add(value).ok_or_else(err)?;
            }
            _ => return Err(err()),
        }
        Ok(Self {
            negative,
            mantissa,
            exp10,
            exp2,
        })
    }

    /// The value scaled by `10^scale` and rounded up to an integer, as
    /// Kubernetes' `ScaledValue` does (`MilliValue` is `scale = 3`).
    /// Negative values clamp to 0; values beyond `u64` saturate.
    pub fn ceil_scaled(&self, scale: i32) -> u64 {
        if self.negative || self.mantissa == 0 {
            return 0;
        }
        let mut numerator = self.mantissa;
        let mut denominator: u128 = 1;
        let exp10 = self.exp10.saturating_add(scale);
        let pow10 = |e: i32| 10u128.checked_pow(e.unsigned_abs());
        if exp10 >= 0 {
            match pow10(exp10).and_then(|p| numerator.checked_mul(p)) {
                Some(n) => numerator = n,
                None => return u64::MAX,
            }
        } else {
            match pow10(exp10) {
                Some(p) => denominator = p,
                None => return 1, // a positive value smaller than one unit
            }
        }
        match numerator.checked_mul(1u128 << self.exp2) {
            Some(n) => numerator = n,
            None => return u64::MAX,
        }
        u64::try_from(numerator.div_ceil(denominator)).unwrap_or(u64::MAX)
    }

    /// Whether the value is below zero (`-1`, `-500m`; `-0` is not).
    pub fn is_negative(&self) -> bool {
        self.negative && self.mantissa != 0
    }

    /// Whole units, rounded up (bytes for memory, devices for extended resources).
    pub fn ceil_value(&self) -> u64 {
        self.ceil_scaled(0)
    }

    /// Thousandths, rounded up (millicores for cpu).
    pub fn ceil_milli(&self) -> u64 {
        self.ceil_scaled(3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kubernetes_quantities() {
        let cases: &[(&str, u64, u64)] = &[
            // text, milli, value
            ("500m", 500, 1),
            ("0.5", 500, 1),
            ("1", 1000, 1),
            ("2", 2000, 2),
            ("1e3", 1_000_000, 1000),
            ("1E3", 1_000_000, 1000),
            ("1k", 1_000_000, 1000),
            ("1Ki", 1_024_000, 1024),
            ("1Gi", 1_073_741_824_000, 1_073_741_824),
            ("1.5Gi", 1_610_612_736_000, 1_610_612_736),
            ("128974848", 128_974_848_000, 128_974_848),
            ("129M", 129_000_000_000, 129_000_000),
            ("123Mi", 128_974_848_000, 128_974_848),
            ("100n", 1, 1),
            ("0", 0, 0),
            ("+8", 8000, 8),
            ("-1", 0, 0),
            (".5", 500, 1),
            ("1m", 1, 1),
            ("0.1m", 1, 1),
        ];
        for &(text, milli, value) in cases {
            let q = Quantity::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(q.ceil_milli(), milli, "{text} milli");
            assert_eq!(q.ceil_value(), value, "{text} value");
        }
    }

    #[test]
    fn rejects_garbage() {
        for text in [
            "", "abc", "1.2.3", "5 Gi", "1Kb", "1e", "e3", ".", "1ee3", "--1",
        ] {
            let err = Quantity::parse(text).expect_err(text);
            assert!(
                err.to_string().contains("invalid quantity"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn saturates_instead_of_overflowing() {
        assert_eq!(Quantity::parse("1e300").unwrap().ceil_value(), u64::MAX);
        assert_eq!(Quantity::parse("1e-300").unwrap().ceil_value(), 1);
        assert_eq!(Quantity::parse("16Ei").unwrap().ceil_milli(), u64::MAX);
    }
}
